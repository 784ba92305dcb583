import Environments
import EnvironmentsControl
import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `Describe`'s answer, encoded one part at a time as the client takes them (varlink's `more`),
/// so that a configuration of any size can be described with no more than one part in memory
/// beyond the snapshot it describes.
///
/// The first part carries every field of the reply and the first settings; each later one the
/// small fields again (`files` empty, no `lastReload`) and the next settings, then the next
/// restart-only keys. Every part is a valid `Describe` reply; the client concatenates
/// `settings` and `pendingRestart`. The parts all come from the one snapshot taken at the call.
struct DescribeParts: Sendable {
    private let snapshot: EnvironmentSnapshot
    private let showSecrets: Bool
    /// The members every part carries, as JSON text without the braces.
    private let commonMembers: [UInt8]
    /// The members only the first part carries (`files`, `lastReload`, `logLevelOverride`,
    /// `warnings`), each
    /// with a leading comma.
    private let firstPartMembers: [UInt8]
    private let pendingKeys: [String]
    /// The settings' keys, sorted once for the whole answer.
    private let settingKeys: [String]
    /// A part is closed once its text reaches this many bytes (a single larger setting goes alone).
    let partSize: Int
    private var settingIndex = 0
    private var pendingIndex = 0
    private var started = false

    init(
        snapshot: EnvironmentSnapshot, showSecrets: Bool, applicationName: String,
        lastReload: [String: JSONValue]?, logLevelOverride: [String: JSONValue]? = nil, partSize: Int
    ) {
        self.snapshot = snapshot
        self.showSecrets = showSecrets
        self.partSize = max(partSize, 1)
        pendingKeys = snapshot.pendingRestart.keys.sorted()
        settingKeys = snapshot.leafKeys
        var common: [String: JSONValue] = [
            "applicationName": .string(applicationName), "environment": .string(snapshot.environmentName),
            "generation": .int(Int(snapshot.generation)), "loadedAt": .string(snapshot.loadedAt.formatted(.iso8601)),
        ]
        if let instance = snapshot.instanceName { common["instance"] = .string(instance) }
        if let directory = snapshot.location?.directory { common["configDirectory"] = .string(directory) }
        var first: [UInt8] = []
        Self.appendMember("files", .array(snapshot.files.map(JSONValue.string)), to: &first)
        if let lastReload { Self.appendMember("lastReload", .object(lastReload), to: &first) }
        if let logLevelOverride { Self.appendMember("logLevelOverride", .object(logLevelOverride), to: &first) }
        if !snapshot.warnings.isEmpty {
            Self.appendMember(
                "warnings", .array(snapshot.warnings.map { .string($0.description) }), to: &first)
        }
        commonMembers = Array(JSONValue.object(common).jsonText().dropFirst().dropLast())
        firstPartMembers = first
    }

    /// Whether every part has been made.
    var isFinished: Bool {
        started && settingIndex == settingKeys.count && pendingIndex == pendingKeys.count
    }

    /// The next reply, encoded with its NUL (`continues` on all but the last), or `nil` after the last.
    mutating func nextMessage() -> [UInt8]? {
        guard !isFinished else { return nil }
        var settings: [UInt8] = []
        var pending: [UInt8] = []
        let fixed = commonMembers.count + (started ? 0 : firstPartMembers.count) + 64
        fill(&settings, &pending, until: partSize - fixed)
        let message = assemble(settings, pending, first: !started, continues: nil)
        started = true
        return message
    }

    /// The whole answer as one reply, or `nil` when it would be larger than `limit` bytes.
    mutating func singleMessage(limit: Int) -> [UInt8]? {
        var settings: [UInt8] = []
        var pending: [UInt8] = []
        let fixed = commonMembers.count + firstPartMembers.count + 64
        guard fixed <= limit else { return nil }
        fill(&settings, &pending, until: limit - fixed)
        guard settingIndex == settingKeys.count, pendingIndex == pendingKeys.count,
            fixed + settings.count + pending.count <= limit
        else { return nil }
        started = true
        return assemble(settings, pending, first: true, continues: false)
    }

    /// Adds settings, then restart-only keys, until their text reaches `budget` bytes (at least one).
    private mutating func fill(_ settings: inout [UInt8], _ pending: inout [UInt8], until budget: Int) {
        let keys = settingKeys
        while settingIndex < keys.count {
            if settings.count + pending.count >= budget && !(settings.isEmpty && pending.isEmpty) { return }
            let key = keys[settingIndex]
            settingIndex += 1
            guard let configured = snapshot.configuredValue(forKey: key) else { continue }
            if !settings.isEmpty { settings.append(UInt8(ascii: ",")) }
            settings += ControlHandler.setting(key, configured, showSecrets: showSecrets).jsonValue.jsonText()
        }
        while pendingIndex < pendingKeys.count {
            if settings.count + pending.count >= budget && !(settings.isEmpty && pending.isEmpty) { return }
            let key = pendingKeys[pendingIndex]
            pendingIndex += 1
            guard let next = snapshot.pendingRestart[key] else { continue }
            let record = PendingRestartRecord(
                key: key,
                running: snapshot.configuredValue(forKey: key).map {
                    ControlHandler.setting(key, $0, showSecrets: showSecrets)
                },
                next: ControlHandler.setting(key, next, showSecrets: showSecrets))
            Self.appendElement(record.jsonValue, to: &pending)
        }
    }

    /// `{"parameters":{...},"continues":true}` and its NUL.
    private func assemble(_ settings: [UInt8], _ pending: [UInt8], first: Bool, continues: Bool?) -> [UInt8] {
        let last = settingIndex == settingKeys.count && pendingIndex == pendingKeys.count
        var message: [UInt8] = []
        message.reserveCapacity(commonMembers.count + settings.count + pending.count + 128)
        message += Array(#"{"parameters":{"#.utf8)
        message += commonMembers
        message += first ? firstPartMembers : Array(#","files":[]"#.utf8)
        message += Array(#","pendingRestart":["#.utf8)
        message += pending
        message += Array(#"],"settings":["#.utf8)
        message += settings
        message += Array("]}".utf8)
        if continues ?? !last { message += Array(#","continues":true"#.utf8) }
        message += Array("}".utf8)
        message.append(0)
        return message
    }

    private static func appendMember(_ name: String, _ value: JSONValue, to text: inout [UInt8]) {
        text.append(UInt8(ascii: ","))
        text += JSONValue.string(name).jsonText()
        text.append(UInt8(ascii: ":"))
        text += value.jsonText()
    }

    private static func appendElement(_ element: JSONValue, to text: inout [UInt8]) {
        if !text.isEmpty { text.append(UInt8(ascii: ",")) }
        text += element.jsonText()
    }
}
