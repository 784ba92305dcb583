import EnvironmentsControl
import Foundation
import Testing
import Varlink

/// The one reload outcome type against the forms earlier versions wrote: the control
/// interface's `ReloadVerdict` and `HistoryEntry` (and, through the same strings, the state file
/// and a fleet's status keys) are read by other versions, so their encoded form must not change.
@Suite("the reload outcome's wire forms")
struct ReloadOutcomeRecordTests {
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

    /// `record` encoded as the daemon encodes it (sorted keys), as text.
    static func encoded(_ record: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(record), as: UTF8.self)
    }

    @Test("every wire string decodes to its case and encodes back unchanged")
    func wireStrings() throws {
        let strings: [String: ReloadOutcomeRecord] = [
            "loaded": .loaded, "applied": .applied, "unchanged": .unchanged, "rejected": .rejected,
            "pending-restart": .pendingRestart,
        ]
        for (string, outcome) in strings {
            let json = Data("[\"\(string)\"]".utf8)
            #expect(try JSONDecoder().decode([ReloadOutcomeRecord].self, from: json) == [outcome])
            #expect(try Self.encoded([outcome]) == "[\"\(string)\"]")
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ReloadOutcomeRecord].self, from: Data(#"["pendingRestart"]"#.utf8))
        }
    }

    @Test("an earlier version's ReloadVerdict decodes, and encodes back to the same bytes")
    func oldVerdicts() throws {
        for old in [Self.oldVerdict, Self.oldRejectedVerdict] {
            let verdict = try JSONDecoder().decode(ReloadVerdictRecord.self, from: Data(old.utf8))
            #expect(try Self.encoded(verdict) == old)
        }
        let rejected = try JSONDecoder().decode(ReloadVerdictRecord.self, from: Data(Self.oldRejectedVerdict.utf8))
        #expect(rejected.outcome == .rejected)
        #expect(rejected.error?.line == 4)
    }

    @Test("an earlier version's history entries decode, and encode back to the same bytes")
    func oldHistoryEntries() throws {
        var outcomes: [ReloadOutcomeRecord] = []
        for old in Self.oldHistoryEntries {
            let entry = try JSONDecoder().decode(ReloadHistoryRecord.self, from: Data(old.utf8))
            #expect(try Self.encoded(entry) == old)
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
        let all: [ReloadOutcomeRecord] = [.loaded, .applied, .unchanged, .pendingRestart, .rejected, .abandoned]
        #expect(Set(all.map(\.verdict.rawValue)) == verdictValues)
        #expect(all.map(\.verdict) == [.applied, .applied, .unchanged, .applied, .rejected, .rejected])
        // Every value the interface declares for either decodes.
        let historyValues = try #require(values("HistoryEntry", "outcome"))
        #expect(historyValues == ["loaded", "applied", "unchanged", "rejected"])
        for value in historyValues.union(verdictValues) {
            #expect(ReloadOutcomeRecord(rawValue: value) != nil, "\(value)")
        }
    }
}
