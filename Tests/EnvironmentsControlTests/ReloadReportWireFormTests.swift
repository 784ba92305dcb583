import Environments
import EnvironmentsControl
import Foundation
import JSONText
import Testing
import Varlink

/// A reload's forms on the control socket against the forms earlier versions wrote: the control
/// interface's `ReloadVerdict` and `HistoryEntry` (and, through the same words, the state file
/// and a fleet's status keys) are read by other versions, so their encoded form must not change.
@Suite("the reload report's wire forms")
struct ReloadReportWireFormTests {
    /// A `ReloadVerdict` as 0.3.0's daemon sent it in `Reload`'s reply.
    static let oldVerdict = """
        {"changedKeys":["LogLevel"],"environment":"Production","finishedMonotonicUSec":2000,\
        "generation":3,"outcome":"applied","startedMonotonicUSec":1000,"trigger":"control"}
        """

    /// A rejected `ReloadVerdict`, with its error, as 0.3.0's daemon sent it.
    static let oldRejectedVerdict = """
        {"changedKeys":[],"environment":"Production","error":{"code":"malformedFile",\
        "description":"Environments.plist:4: not a property list","file":"Environments.plist",\
        "line":4,"message":"not a property list"},"finishedMonotonicUSec":2000,"generation":2,\
        "outcome":"rejected","startedMonotonicUSec":1000,"trigger":"signal"}
        """

    /// `History` entries as 0.3.0's daemon listed them, one of each outcome.
    static let oldHistoryEntries = [
        #"{"changedKeyCount":0,"changes":[],"environment":"Production","generation":1,"outcome":"loaded","pid":42,"time":"2026-11-28T22:00:00.000Z","trigger":"start","valuesOmitted":false}"#,
        #"{"changedKeyCount":1,"changes":[{"key":"LogLevel","previous":"info","value":"debug"}],"environment":"Production","generation":2,"outcome":"applied","time":"2026-11-28T22:01:00.000Z","trigger":"file","valuesOmitted":false}"#,
        #"{"changedKeyCount":0,"changes":[],"environment":"Production","generation":2,"outcome":"unchanged","time":"2026-11-28T22:02:00.000Z","trigger":"signal","valuesOmitted":false}"#,
        #"{"callerUID":0,"changedKeyCount":0,"changes":[],"environment":"Production","error":{"code":"validationFailed","description":"Limit: must be at most 100","key":"Limit","message":"must be at most 100"},"generation":2,"outcome":"rejected","time":"2026-11-28T22:03:00.000Z","trigger":"control","valuesOmitted":false}"#,
    ]

    /// `object` as the daemon sends it (the varlink message's JSON text, keys sorted).
    static func text(_ object: [String: JSONValue]) -> String {
        String(decoding: JSONValue.object(object).jsonText(), as: UTF8.self)
    }

    /// `text` as a JSON object.
    static func object(_ text: String) throws -> [String: JSONValue] {
        try #require(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)).objectValue)
    }

    @Test("every outcome's wire word reads back as that outcome; other words do not")
    func wireWords() {
        let words: [String: ReloadReport.Outcome] = [
            "loaded": .loaded, "applied": .applied, "unchanged": .unchanged, "rejected": .rejected,
            "abandoned": .abandoned,
        ]
        for (word, outcome) in words {
            #expect(ReloadReport.Outcome(wireName: word) == outcome)
            #expect(outcome.wireName == word)
        }
        #expect(ReloadReport.Outcome(wireName: "pendingRestart") == nil)
        #expect(ReloadReport.Outcome(wireName: "pending-restart") == nil, "a fleet host's status word alone")
    }

    @Test("an earlier version's ReloadVerdict decodes, and encodes back to the same bytes")
    func oldVerdicts() throws {
        for old in [Self.oldVerdict, Self.oldRejectedVerdict] {
            let verdict = try ReloadReport(verdict: try Self.object(old))
            #expect(Self.text(verdict.verdictJSON) == old)
        }
        let rejected = try ReloadReport(verdict: try Self.object(Self.oldRejectedVerdict))
        #expect(rejected.outcome == .rejected)
        #expect(rejected.error?.line == 4)
        #expect(rejected.error?.description == "Environments.plist:4: not a property list")
        #expect(rejected.error?.code.description == "malformedFile")
    }

    @Test("an earlier version's history entries decode, and encode back to the same bytes")
    func oldHistoryEntries() throws {
        var outcomes: [ReloadReport.Outcome] = []
        for old in Self.oldHistoryEntries {
            let entry = try ReloadReport(historyEntry: try Self.object(old))
            #expect(Self.text(entry.historyJSON) == old)
            outcomes.append(entry.outcome)
        }
        #expect(outcomes == [.loaded, .applied, .unchanged, .rejected])
    }

    @Test("a verdict says only what the interface's ReloadVerdict declares; a history entry what HistoryEntry does")
    func verdictsStayInTheInterface() throws {
        let interface = try InterfaceDefinition(ControlInterface.description)
        func values(_ type: String, _ field: String) -> Set<String>? {
            guard case .structure(let fields) = interface.types[type],
                case .enumeration(let values) = fields.first(where: { $0.name == field })?.type
            else { return nil }
            return Set(values)
        }
        let verdictValues = try #require(values("ReloadVerdict", "outcome"))
        #expect(verdictValues == ["applied", "unchanged", "rejected"])
        let all: [ReloadReport.Outcome] = [.loaded, .applied, .unchanged, .rejected, .abandoned]
        let verdicts = all.map { ReloadReport(outcome: $0, trigger: "signal", generation: 1, environment: "E").verdict }
        #expect(Set(verdicts.map(\.wireName)) == verdictValues)
        #expect(verdicts == [.applied, .applied, .unchanged, .rejected, .rejected])
        // Every value the interface declares for either decodes.
        let historyValues = try #require(values("HistoryEntry", "outcome"))
        #expect(historyValues == ["loaded", "applied", "unchanged", "rejected"])
        for value in historyValues.union(verdictValues) {
            #expect(ReloadReport.Outcome(wireName: value) != nil, "\(value)")
        }
    }

    @Test("an abandoned reload's verdict is a rejection that says the service stops")
    func abandonedVerdict() throws {
        let report = ReloadReport(outcome: .abandoned, trigger: "file", generation: 4, environment: "Production")
        let verdict = report.verdictJSON
        #expect(verdict["outcome"] == .string("rejected"))
        let error = try #require(verdict["error"]?.objectValue)
        #expect(error["code"] == .string("unknown"))
        #expect(error["description"] == .string(report.abandonedReason))
        #expect(try ReloadReport(verdict: verdict).error?.description == report.abandonedReason)
    }
}
