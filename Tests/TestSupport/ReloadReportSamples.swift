package import Environments
import Foundation

/// `ReloadReport`s for the tests that hold every surface to every field
/// (`ReloadReportSurfaceTests`, and the fleet's in `EtcdFleetClientTests`): a report of each
/// outcome with every field set to a value of its own, and for each field a change to another
/// such value.
package enum ReloadReportSamples {
    /// Every outcome.
    package static let outcomes: [ReloadReport.Outcome] = [.loaded, .applied, .unchanged, .rejected, .abandoned]

    /// A report of `outcome` with every field set, none to its default (so that a surface that
    /// shows a field shows something of it).
    package static func report(_ outcome: ReloadReport.Outcome) -> ReloadReport {
        ReloadReport(
            outcome: outcome, trigger: "trigger-t1", revision: 424_242, generation: 31_337, environment: "Env-e2",
            pendingRestart: ["Pending.Key-p3"],
            error: EnvironmentError(
                .validationFailed, "message-m4", key: "Error.Key-k5", file: "/etc/app/file-f6.plist", line: 977,
                hint: "hint-h7"),
            instance: "instance-i8", callerUID: 61_001, callerUnit: "caller-u9.service",
            changedKeys: ["Changed.Key-c10"],
            changedKeyCount: 1, previousValues: ["Changed.Key-c10": "previous-v11"],
            values: ["Changed.Key-c10": "value-v12"], valuesOmitted: false, startedMonotonicMicroseconds: 1_000_113,
            finishedMonotonicMicroseconds: 5_000_114, finished: Date(timeIntervalSince1970: 1_790_000_000.125),
            pid: 40_415)
    }

    /// For each stored property of `ReloadReport`, by name, a change of it to another value of
    /// its own. A property added to the report without a change here fails the test that
    /// compares these names with the report's (`Mirror`).
    package static let changes: [String: @Sendable (inout ReloadReport) -> Void] = [
        "outcome": { report in
            report.outcome = outcomes[(outcomes.firstIndex(of: report.outcome)! + 1) % outcomes.count]
        },
        "trigger": { $0.trigger = "trigger-other" },
        "revision": { $0.revision = 515_151 },
        "generation": { $0.generation = 2_222 },
        "environment": { $0.environment = "Env-other" },
        // Emptied: a surface may tell only whether keys wait (a fleet host's `pending-restart`).
        "pendingRestart": { $0.pendingRestart = [] },
        "error": {
            $0.error = EnvironmentError(
                .malformedFile, "other-message", key: "Other.Key", file: "/etc/app/other.plist", line: 12,
                hint: "other-hint")
        },
        "instance": { $0.instance = "instance-other" },
        "callerUID": { $0.callerUID = 61_002 },
        "callerUnit": { $0.callerUnit = "other.service" },
        "changedKeys": { $0.changedKeys.append("Changed.Other") },
        "changedKeyCount": { $0.changedKeyCount = 5 },
        "previousValues": { $0.previousValues["Changed.Key-c10"] = "previous-other" },
        "values": { $0.values["Changed.Key-c10"] = "value-other" },
        "valuesOmitted": { $0.valuesOmitted.toggle() },
        "startedMonotonicMicroseconds": { $0.startedMonotonicMicroseconds = 1_000_999 },
        "finishedMonotonicMicroseconds": { $0.finishedMonotonicMicroseconds = 5_999_999 },
        "finished": { $0.finished += 61 },
        "pid": { $0.pid = 40_416 },
    ]

    /// The report's stored properties, by name, in declaration order.
    package static var fieldNames: [String] {
        Mirror(reflecting: report(.applied)).children.compactMap(\.label)
    }

    /// The fields whose change alters what `render` makes of a report of some outcome: the
    /// fields a surface shows. `render` is called once per outcome and once per field and outcome.
    package static func shownFields(by render: (ReloadReport) throws -> String) rethrows -> Set<String> {
        var shown: Set<String> = []
        for outcome in outcomes {
            let base = report(outcome)
            let text = try render(base)
            for name in fieldNames where !shown.contains(name) {
                guard let change = changes[name] else { continue }
                var changed = base
                change(&changed)
                if try render(changed) != text { shown.insert(name) }
            }
        }
        return shown
    }
}
