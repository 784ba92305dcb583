package import Environments
package import JSONText
import Varlink

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// The control interface's forms of a `ReloadReport`: `ReloadVerdict` (the answer to `Reload`,
/// and `Describe`'s `lastReload`) and `HistoryEntry` (`History`), written by the daemon and read
/// back by `envctl`. Other versions read and write them, so their members never change:
/// `Tests/EnvironmentsControlTests` holds them to the interface's text and to what 0.3.0 wrote.
///
/// Which fields each form carries, and why the others are left out, is
/// `ReloadReportSurfaceTests`' table; a field added to `ReloadReport` fails that test until
/// it is placed.
extension ReloadReport.Outcome {
    /// The outcome's name on every wire (the control interface, the state file, the journal's
    /// history, the metrics' `result` label, a fleet host's status): `loaded`, `applied`,
    /// `unchanged`, `rejected`, `abandoned` (never written: a verdict says `rejected`).
    package var wireName: String {
        switch self {
        case .loaded: "loaded"
        case .applied: "applied"
        case .unchanged: "unchanged"
        case .rejected: "rejected"
        case .abandoned: "abandoned"
        }
    }

    /// The outcome named `wireName`, or `nil` for another word.
    package init?(wireName: String) {
        switch wireName {
        case "loaded": self = .loaded
        case "applied": self = .applied
        case "unchanged": self = .unchanged
        case "rejected": self = .rejected
        case "abandoned": self = .abandoned
        default: return nil
        }
    }
}

extension ReloadReport {
    /// `ReloadVerdict`: the verdict's outcome (``verdict``), environment, trigger, generation,
    /// changed keys, error (a rejection's; an abandoned reload's says so) and monotonic times.
    package var verdictJSON: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "outcome": .string(verdict.wireName), "environment": .string(environment), "trigger": .string(trigger),
            "generation": .int(Int(clamping: generation)), "changedKeys": .array(changedKeys.map(JSONValue.string)),
            "startedMonotonicUSec": .int(Int(clamping: startedMonotonicMicroseconds)),
            "finishedMonotonicUSec": .int(Int(clamping: finishedMonotonicMicroseconds)),
        ]
        if let error = verdictError { members["error"] = ConfigurationErrorRecord(error).jsonValue }
        return members
    }

    /// The report a `ReloadVerdict` tells of.
    ///
    /// - Throws: `DecodingError` when a member the interface requires is missing or of another type.
    package init(verdict object: [String: JSONValue]) throws {
        let members = WireMembers(object, of: "ReloadVerdict")
        self.init(
            outcome: try members.outcome("outcome"), trigger: try members.string("trigger"),
            generation: try members.unsigned("generation"), environment: try members.string("environment"),
            error: try members.error("error"), changedKeys: try members.strings("changedKeys"),
            startedMonotonicMicroseconds: try members.unsigned("startedMonotonicUSec"),
            finishedMonotonicMicroseconds: try members.unsigned("finishedMonotonicUSec"))
    }

    /// `HistoryEntry`: when it finished, the outcome, generation, environment, instance,
    /// trigger, caller, revision (`fleetRevision`), changed keys with their values, error and pid.
    package var historyJSON: [String: JSONValue] {
        var members: [String: JSONValue] = [
            "time": .string(Self.timestamp(finished)), "outcome": .string(outcome.wireName),
            "generation": .int(Int(clamping: generation)), "environment": .string(environment),
            "trigger": .string(trigger), "changes": .array(settingChanges.map(\.jsonValue)),
            "changedKeyCount": .int(changedKeyCount), "valuesOmitted": .bool(valuesOmitted),
        ]
        if let instance { members["instance"] = .string(instance) }
        if let callerUID { members["callerUID"] = .int(Int(callerUID)) }
        if let callerUnit { members["callerUnit"] = .string(callerUnit) }
        if let revision { members["fleetRevision"] = .int(Int(clamping: revision)) }
        if let error { members["error"] = ConfigurationErrorRecord(error).jsonValue }
        if let pid { members["pid"] = .int(Int(pid)) }
        return members
    }

    /// The report a `HistoryEntry` tells of.
    ///
    /// - Throws: `DecodingError` when a member the interface requires is missing or of another type.
    package init(historyEntry object: [String: JSONValue]) throws {
        let members = WireMembers(object, of: "HistoryEntry")
        let changes = try members.changes("changes")
        var previousValues: [String: String] = [:]
        var values: [String: String] = [:]
        for change in changes {
            previousValues[change.key] = change.previous
            values[change.key] = change.value
        }
        self.init(
            outcome: try members.outcome("outcome"), trigger: try members.string("trigger"),
            revision: try members.optionalInt("fleetRevision").map(Int64.init),
            generation: try members.unsigned("generation"), environment: try members.string("environment"),
            error: try members.error("error"), instance: try members.optionalString("instance"),
            callerUID: try members.optionalInt("callerUID").flatMap(UInt32.init(exactly:)),
            callerUnit: try members.optionalString("callerUnit"), changedKeys: changes.map(\.key),
            changedKeyCount: try members.int("changedKeyCount"), previousValues: previousValues, values: values,
            valuesOmitted: try members.bool("valuesOmitted"), finished: try members.time("time"),
            pid: try members.optionalInt("pid").flatMap(Int32.init(exactly:)))
    }

    /// The changed keys with their values, in key order, as `HistoryEntry.changes` lists them.
    package var settingChanges: [SettingChangeRecord] {
        changedKeys.sorted().map { SettingChangeRecord(key: $0, previous: previousValues[$0], value: values[$0]) }
    }

    /// A history entry's time: ISO 8601 with milliseconds, UTC.
    package static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// What started the attempt, in words: `start`, `signal`, `file`, `systemctl reload
    /// (ExecReload=, uid 62506)` (a control call from `daemonUnit`, the daemon's own unit),
    /// `control from uid 0 in backup.service`... (another caller; `control by the application`
    /// without one), `fleet revision 42` (another source's: `NAME revision 42`). The names of
    /// entries written before 0.2.0 (`file-change`, `api`, `etcd`) read as today's.
    package func triggerDescription(daemonUnit: String? = nil) -> String {
        switch trigger {
        case "control", "api":
            guard let callerUID else { return "control by the application" }
            if let callerUnit, callerUnit == daemonUnit {
                return "systemctl reload (ExecReload=, uid \(callerUID))"
            }
            return "control from uid \(callerUID)" + (callerUnit.map { " in \($0)" } ?? "")
        case "fleet", "etcd": return revision.map { "fleet revision \($0)" } ?? "fleet"
        case "file", "file-change": return "file"
        default: return revision.map { "\(trigger) revision \($0)" } ?? trigger
        }
    }
}

extension ConfigurationErrorRecord {
    /// How the control socket gives `error`.
    package init(_ error: EnvironmentError) {
        self.init(
            code: "\(error.code)", message: error.message, description: error.description, key: error.key,
            file: error.file, line: error.line)
    }

    /// The record as JSON, as `JSONValueEncoder` makes it.
    package var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "code": .string(code), "message": .string(message), "description": .string(description),
        ]
        if let key { members["key"] = .string(key) }
        if let file { members["file"] = .string(file) }
        if let line { members["line"] = .int(line) }
        return .object(members)
    }
}

extension EnvironmentError {
    /// The error another process told in a `ConfigurationError`: its code by name, and its
    /// description as it was written.
    package init(_ record: ConfigurationErrorRecord) {
        self.init(.init(named: record.code), record.message, key: record.key, file: record.file, line: record.line)
        toldDescription = record.description
    }
}

/// The members of a record read off the wire, with errors that name the record and the member.
private struct WireMembers {
    let object: [String: JSONValue]
    let record: String

    init(_ object: [String: JSONValue], of record: String) {
        self.object = object
        self.record = record
    }

    func failure(_ name: String, _ problem: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [], debugDescription: "\(record).\(name) \(problem)"))
    }

    func present(_ name: String) throws -> JSONValue? {
        guard let value = object[name] else { return nil }
        if case .null = value { return nil }
        return value
    }

    func required(_ name: String) throws -> JSONValue {
        guard let value = try present(name) else { throw failure(name, "is missing") }
        return value
    }

    func string(_ name: String) throws -> String {
        guard let text = try required(name).stringValue else { throw failure(name, "is not a string") }
        return text
    }

    func optionalString(_ name: String) throws -> String? {
        guard let value = try present(name) else { return nil }
        guard let text = value.stringValue else { throw failure(name, "is not a string") }
        return text
    }

    func int(_ name: String) throws -> Int {
        guard let number = try required(name).intValue else { throw failure(name, "is not an integer") }
        return number
    }

    func optionalInt(_ name: String) throws -> Int? {
        guard let value = try present(name) else { return nil }
        guard let number = value.intValue else { throw failure(name, "is not an integer") }
        return number
    }

    func unsigned(_ name: String) throws -> UInt64 {
        guard let number = UInt64(exactly: try int(name)) else { throw failure(name, "is negative") }
        return number
    }

    func bool(_ name: String) throws -> Bool {
        guard let flag = try required(name).boolValue else { throw failure(name, "is not a boolean") }
        return flag
    }

    func strings(_ name: String) throws -> [String] {
        guard let texts = try required(name).arrayValue?.map(\.stringValue), !texts.contains(nil) else {
            throw failure(name, "is not an array of strings")
        }
        return texts.map { $0! }
    }

    func outcome(_ name: String) throws -> ReloadReport.Outcome {
        let word = try string(name)
        guard let outcome = ReloadReport.Outcome(wireName: word) else { throw failure(name, "is '\(word)'") }
        return outcome
    }

    func time(_ name: String) throws -> Date {
        let text = try string(name)
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        guard let date = try? Date(text, strategy: Date.ISO8601FormatStyle()) else {
            throw failure(name, "is not an ISO 8601 time: '\(text)'")
        }
        return date
    }

    func error(_ name: String) throws -> EnvironmentError? {
        guard let value = try present(name) else { return nil }
        guard let object = value.objectValue else { throw failure(name, "is not an object") }
        return EnvironmentError(try JSONValue.record(ConfigurationErrorRecord.self, from: object))
    }

    func changes(_ name: String) throws -> [SettingChangeRecord] {
        guard let elements = try required(name).arrayValue else { throw failure(name, "is not an array") }
        return try elements.map { element in
            guard let object = element.objectValue else { throw failure(name, "holds a non-object") }
            return try JSONValue.record(SettingChangeRecord.self, from: object)
        }
    }
}
