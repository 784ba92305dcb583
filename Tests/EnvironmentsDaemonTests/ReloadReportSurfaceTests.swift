import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import JSONText
import Logging
import MetricsTestKit
import SystemdSupport
import TestSupport
import Testing
import Varlink

/// Every surface that tells of a reload, held to every field of the one value it renders
/// (`ReloadReport`): a field added to the report fails here until each surface shows it, or
/// lists it among the fields it leaves out, with why.
///
/// A surface shows a field when changing that field alone (``ReloadReportSamples/changes``)
/// changes what the surface renders of a report of some outcome (every field set to a value of
/// its own). The surfaces that other processes read back (the control socket's two forms, the
/// state file) must also read back what they wrote: decoded and written again, the same text.
/// The fleet's status key is held the same way in `EtcdFleetClientTests` (trait Fleet).
@Suite("every surface of a reload shows each of its fields, or says why not")
struct ReloadReportSurfaceTests {
    /// One place that tells of a reload.
    struct Surface: Sendable, CustomTestStringConvertible {
        var name: String
        /// The fields it does not show, each with why.
        var notShown: [String: String]
        /// What it makes of a report.
        var render: @Sendable (ReloadReport) throws -> String
        /// What it makes of a report, read back from its rendering; `nil` for a surface no one reads back.
        var readBack: (@Sendable (ReloadReport) throws -> String)?

        var testDescription: String { name }
    }

    /// The configuration in use after the sample reports, and before.
    static func snapshots() throws -> (current: EnvironmentSnapshot, previous: EnvironmentSnapshot) {
        let current = try Environment(
            values: ["Changed.Key-c10": "value-v12", "Pending.Key-p3": 1], environmentName: "Env-e2")
        let previous = try Environment(values: ["Changed.Key-c10": "previous-v11"], environmentName: "Env-e2")
        return (current.snapshot, previous.snapshot)
    }

    static let verdict = Surface(
        name: "the control socket's ReloadVerdict (Reload, Describe's lastReload; envctl reload, envctl show)",
        notShown: [
            "revision": "the history's fleetRevision tells it",
            "pendingRestart": "Describe's pendingRestart lists them, with their values",
            "instance": "Describe's instance names it",
            "callerUID": "the caller is the one who asked; the history names it",
            "callerUnit": "as callerUID",
            "changedKeyCount": "the verdict lists every changed key",
            "previousValues": "the history keeps the values",
            "values": "the history keeps the values",
            "valuesOmitted": "the history keeps the values",
            "finished":
                "the verdict's times are monotonic (startedMonotonicUSec, finishedMonotonicUSec); the history's time is the wall clock",
            "pid": "the caller asked the process; the history and the state file name it",
        ],
        render: { ReloadReportWireForm.text($0.verdictJSON) },
        readBack: { ReloadReportWireForm.text(try ReloadReport(verdict: $0.verdictJSON).verdictJSON) })

    static let history = Surface(
        name: "the control socket's HistoryEntry (History; envctl history)",
        notShown: [
            "pendingRestart":
                "Describe and the state file list the keys waiting now; the journal's entry of each reload",
            "startedMonotonicMicroseconds":
                "an entry has the wall clock's time; the verdict and the state file the monotonic times",
            "finishedMonotonicMicroseconds": "as startedMonotonicMicroseconds",
        ],
        render: { ReloadReportWireForm.text($0.historyJSON) },
        readBack: { ReloadReportWireForm.text(try ReloadReport(historyEntry: $0.historyJSON).historyJSON) })

    /// The state file after `report`, which is also its last reload.
    static func stateFile(_ report: ReloadReport) throws -> String {
        let (current, _) = try snapshots()
        let process = DaemonProcess(pid: 4242, startTime: 1, bootID: "boot")
        let state = ReloadState(report, configuration: current, lastReload: report, options: nil, process: process)
        return try stateText(state)
    }

    static func stateText(_ state: ReloadState) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(state), as: UTF8.self)
    }

    static let state = Surface(
        name: "the state file (environment-state.json: lastReload and the configuration's fields)",
        notShown: [
            "revision": "the journal and the history tell it",
            "callerUID": "the journal and the history tell it",
            "callerUnit": "the journal and the history tell it",
            "changedKeyCount": "lastReload lists every changed key",
            "previousValues":
                "the file has the running values of keys that wait for a restart (runningValues), not a reload's",
            "values": "as previousValues",
            "valuesOmitted": "as previousValues",
            "finished": "the file has the monotonic times, which a script that signalled the daemon compares",
            "pid": "the file's pid is the process's, which wrote it",
        ],
        render: { try stateFile($0) },
        readBack: {
            let text = try stateFile($0)
            return try stateText(try JSONDecoder().decode(ReloadState.self, from: Data(text.utf8)))
        })

    /// The journal's entries of `report`, through a journal socket.
    static func journal(_ report: ReloadReport) throws -> String {
        let directory = try TemporaryFolder("surface-journal")
        let socket = try NotifySocket(path: directory.path + "/journal.sock")
        let reporter = ConfigurationReporter(
            output: .socket(socket.path), identifier: "surface", logger: Logger(label: "surface"))
        let (current, previous) = try snapshots()
        reporter.report(report, configuration: current, previous: previous)
        var entries: [String] = []
        while let entry = socket.receive(timeout: .milliseconds(50)) { entries.append(entry) }
        return entries.joined(separator: "\n---\n")
    }

    static let journalSurface = Surface(
        name: "the journal (CONFIG_* fields, MESSAGE_ID; envctl history reads it back)",
        notShown: [
            "changedKeyCount": "the applied entry counts the changed keys it lists (CONFIG_CHANGED_COUNT)",
            "previousValues":
                "the entry lists the values before and after from the snapshots, within its own bounds (CONFIG_PREVIOUS_SETTING, CONFIG_SETTING)",
            "values": "as previousValues",
            "valuesOmitted": "as previousValues",
            "startedMonotonicMicroseconds": "the journal stamps each entry with its own clocks",
            "finishedMonotonicMicroseconds": "as startedMonotonicMicroseconds",
            "finished": "as startedMonotonicMicroseconds",
            "pid": "the journal adds _PID itself",
        ],
        render: { try journal($0) })

    /// The log's lines of `report`.
    static func log(_ report: ReloadReport) throws -> String {
        let kept = KeptLog()
        let logger = Logger(label: "surface") { _ in kept.handler() }
        let (current, previous) = try snapshots()
        logger.log(report, configuration: current, previous: previous)
        return kept.all.map { "\($0.level) \($0.message) \($0.metadata.sorted { $0.key < $1.key })" }
            .joined(separator: "\n")
    }

    static let logSurface = Surface(
        name: "the log line (swift-log)",
        notShown: [
            "revision": "one line per event; the journal's entry has the trigger's details",
            "instance": "as revision",
            "callerUID": "as revision",
            "callerUnit": "as revision",
            "changedKeyCount": "the line lists the changed keys",
            "previousValues": "the line takes the values from the snapshots, cut as the journal's listing cuts them",
            "values": "as previousValues",
            "valuesOmitted": "as previousValues",
            "startedMonotonicMicroseconds": "the log handler stamps the line",
            "finishedMonotonicMicroseconds": "as startedMonotonicMicroseconds",
            "finished": "as startedMonotonicMicroseconds",
            "pid": "as startedMonotonicMicroseconds",
        ],
        render: { try log($0) })

    /// The metrics after `report`.
    static func metrics(_ report: ReloadReport) -> String {
        let metrics = TestMetrics()
        ReloadMetrics(factory: metrics).record(report)
        let counters = metrics.counters.map { "\($0.label) \($0.dimensions) \($0.totalValue)" }
        let recorders = metrics.recorders.map { "\($0.label) \($0.values)" }
        let timers = metrics.timers.map { "\($0.label) \($0.values)" }
        return (counters + recorders + timers).sorted().joined(separator: "\n")
    }

    static let metricsSurface = Surface(
        name: "the metrics (environments_*)",
        notShown: [
            "revision": "a label per revision would make a series per reload",
            "environment": "the process's own labels (its exporter's) say which daemon it is",
            "instance": "as environment",
            "pendingRestart": "a count of keys is not a reload's result; the state file and Describe list them",
            "error": "the result label says rejected; the error is text",
            "callerUID": "a label per caller would make a series per caller",
            "callerUnit": "as callerUID",
            "changedKeys": "keys are not labels",
            "changedKeyCount": "as changedKeys",
            "previousValues": "values are not metrics",
            "values": "as previousValues",
            "valuesOmitted": "as previousValues",
            "pid": "the exporter's process labels",
        ],
        render: { metrics($0) })

    static let status = Surface(
        name: "systemd's STATUS= (systemctl status)",
        notShown: [
            "outcome": "one line of what runs now; after a rejection it adds why",
            "trigger": "the line says what runs; RELOADING's STATUS= said what started it",
            "revision": "a source's own note says its revision (setStatusNote)",
            "pendingRestart": "the journal's warning and the state file list them",
            "callerUID": "the journal and the history tell it",
            "callerUnit": "as callerUID",
            "changedKeys": "the journal lists them",
            "changedKeyCount": "as changedKeys",
            "previousValues": "as changedKeys",
            "values": "as changedKeys",
            "valuesOmitted": "as changedKeys",
            "startedMonotonicMicroseconds": "MONOTONIC_USEC= of RELOADING=1 tells systemd when",
            "finishedMonotonicMicroseconds": "as startedMonotonicMicroseconds",
            "finished": "systemd stamps it",
            "pid": "systemd knows its main process",
        ],
        render: { SystemdStatus.text(after: $0, notes: [:]) })

    static let surfaces = [verdict, history, state, journalSurface, logSurface, metricsSurface, status]

    @Test("every stored property of ReloadReport has a sample change (a field added without one fails here)")
    func everyFieldHasAChange() {
        #expect(Set(ReloadReportSamples.fieldNames) == Set(ReloadReportSamples.changes.keys))
    }

    @Test("each surface shows every field it does not list as left out, and none that it lists", arguments: surfaces)
    func surfaceShowsItsFields(_ surface: Surface) throws {
        let shown = try ReloadReportSamples.shownFields(by: surface.render)
        for name in ReloadReportSamples.fieldNames {
            if let why = surface.notShown[name] {
                #expect(!shown.contains(name), "\(surface.name) shows \(name), listed as left out (\(why))")
            } else {
                #expect(
                    shown.contains(name),
                    "\(surface.name) does not show \(name): render it there, or list it in notShown with why")
            }
        }
        for name in surface.notShown.keys {
            #expect(
                ReloadReportSamples.fieldNames.contains(name), "\(surface.name) lists \(name), no field of the report")
        }
    }

    @Test(
        "a surface read back reads what it wrote: every field it shows survives",
        arguments: surfaces.filter { $0.readBack != nil })
    func readBack(_ surface: Surface) throws {
        let readBack = try #require(surface.readBack)
        for outcome in ReloadReportSamples.outcomes {
            var report = ReloadReportSamples.report(outcome)
            #expect(try readBack(report) == surface.render(report), "\(surface.name), \(outcome)")
            for change in ReloadReportSamples.changes.values {
                change(&report)
                #expect(try readBack(report) == surface.render(report), "\(surface.name), \(outcome): \(report)")
            }
        }
    }
}

/// The text of a control interface form, as the daemon sends it.
enum ReloadReportWireForm {
    static func text(_ object: [String: JSONValue]) -> String {
        String(decoding: JSONValue.object(object).jsonText(), as: UTF8.self)
    }
}
