package import Environments
package import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `SettingChange` in the interface: one changed key, with its values as `envctl show` prints
/// them (secrets `<redacted>`); a value is absent where the key was not set (or, with
/// `valuesOmitted`, not kept).
package struct SettingChangeRecord: Codable, Sendable, Hashable {
    package var key: String
    package var previous: String?
    package var value: String?

    package init(key: String, previous: String?, value: String?) {
        self.key = key
        self.previous = previous
        self.value = value
    }

    /// The record as JSON, as `JSONValueEncoder` makes it.
    package var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["key": .string(key)]
        if let previous { members["previous"] = .string(previous) }
        if let value { members["value"] = .string(value) }
        return .object(members)
    }
}

/// The output of `History`: its entries in `HistoryEntry`'s form (`ReloadReport/historyJSON`).
package struct HistoryReply: Codable, Sendable, Hashable {
    /// Oldest first.
    package var entries: [ReloadReport]
    /// How many entries the daemon keeps at most.
    package var limit: Int
    /// How many older entries it no longer has.
    package var dropped: Int

    package init(entries: [ReloadReport], limit: Int, dropped: Int) {
        self.entries = entries
        self.limit = limit
        self.dropped = dropped
    }

    private enum CodingKeys: String, CodingKey {
        case entries, limit, dropped
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entries = try container.decode([JSONValue].self, forKey: .entries).map { entry in
            guard let object = entry.objectValue else {
                throw DecodingError.dataCorruptedError(
                    forKey: .entries, in: container, debugDescription: "a history entry is not an object")
            }
            return try ReloadReport(historyEntry: object)
        }
        limit = try container.decode(Int.self, forKey: .limit)
        dropped = try container.decode(Int.self, forKey: .dropped)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entries.map { JSONValue.object($0.historyJSON) }, forKey: .entries)
        try container.encode(limit, forKey: .limit)
        try container.encode(dropped, forKey: .dropped)
    }
}
