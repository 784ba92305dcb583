package import Logging

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// One complete, immutable configuration: every effective value with its source, for one
/// environment, at one generation.
///
/// A reload builds a whole new snapshot and swaps it in at once, so a reader that holds a
/// snapshot never sees a mix of old and new values. Snapshots are `Sendable` and can be
/// read from any thread.
public final class EnvironmentSnapshot: Sendable {
    /// The selected environment, for example `Production`.
    public let environmentName: String
    /// The selected instance (``EnvironmentOptions/instance``), or `nil` for none.
    public let instanceName: String?
    /// Counts applied configurations: 1 for the first load, one more for each applied reload.
    public let generation: UInt64
    /// The files that were read, in the order they were applied.
    public let files: [String]
    /// Where the configuration was looked for, for error messages.
    package let location: ConfigurationLocation?
    /// Key paths whose values are secret (from `Secrets` arrays and the options).
    package let secretKeys: Set<String>
    /// Key paths that cannot change without a restart: the options' and the files', and,
    /// after a reload, every one the running program had (a key taken out of
    /// `RestartRequired` stays restart-only until a restart; one added holds at once).
    package let restartRequiredKeys: Set<String>
    /// Keys whose new value is waiting for a restart, with that new value: restart-only keys
    /// that changed, and every key whose value is built from one of them through `${...}`
    /// (directly or through other keys). The snapshot itself holds the old values (a key
    /// built from a waiting key is interpolated with that key's running value).
    public let pendingRestart: [String: ConfiguredValue]
    /// When the snapshot was built.
    package let loadedAt: Date
    /// The key paths of values that are not dictionaries (and of empty dictionaries), sorted:
    /// what a listing shows.
    ///
    /// Made from the snapshot's table at each call (sorting n keys): keep the result rather
    /// than ask again in a loop. Not stored, so that a snapshot holds no second reference to
    /// every key (16 bytes a key).
    public var leafKeys: [String] {
        table.compactMap { key, entry in
            if case .dictionary(let members) = entry.value, !members.isEmpty { return nil }
            return key
        }.sorted()
    }
    /// How many ``leafKeys`` there are.
    package let leafCount: Int
    /// Keys whose value holds `<credential NAME: not readable here>` instead of a credential
    /// that could not be read (`EnvironmentOptions.unreadableCredentialsAsPlaceholders`),
    /// with the credentials' names; empty otherwise.
    package let unreadableCredentials: [String: Set<String>]
    /// What loads but should be fixed (a key written twice in one dictionary), in the order
    /// of the files; empty for most configurations.
    public let warnings: [ConfigurationWarning]
    /// Where reads of this snapshot log what they report (a value of the wrong type that
    /// falls back to a default): the options' ``EnvironmentOptions/logger``.
    package let logger: Logger

    /// The one table reads use: every key path (dictionaries and their members) with its
    /// value, the index of its source in ``sources`` and its secrecy.
    let table: SettingIndex
    /// The sources that ``table``'s entries name, each once.
    let sources: [ValueSource]

    init(
        environmentName: String,
        instanceName: String? = nil,
        generation: UInt64,
        tree: [String: SettingNode],
        files: [String],
        location: ConfigurationLocation?,
        secretKeys: Set<String>,
        restartRequiredKeys: Set<String>,
        pendingRestart: [String: ConfiguredValue],
        unreadableCredentials: [String: Set<String>] = [:],
        warnings: [ConfigurationWarning] = [],
        logger: Logger
    ) {
        self.environmentName = environmentName
        self.instanceName = instanceName
        self.generation = generation
        let table = SettingTable(tree)
        self.table = SettingIndex(keys: table.paths, entries: table.entries)
        self.sources = table.sources
        self.leafCount = table.leafCount
        self.files = files
        self.location = location
        self.secretKeys = secretKeys
        self.restartRequiredKeys = restartRequiredKeys
        self.pendingRestart = pendingRestart
        self.unreadableCredentials = unreadableCredentials
        self.warnings = warnings
        self.logger = logger
        self.loadedAt = Date()
    }

    /// The whole effective configuration as one dictionary.
    package var values: [String: SettingValue] {
        var values: [String: SettingValue] = [:]
        for (key, entry) in table where SettingPath.parentEnd(of: key[...]) == nil {
            guard let name = try? SettingPath(parsing: key).components[0] else { continue }
            values[name] = entry.value
        }
        return values
    }

    /// Whether `other` has the same environment, values, sources, restart-only keys, pending
    /// restarts and warnings: whether a reload from one to the other changes anything a reader can see. The
    /// generation, the load time and the list of files read are not compared: a drop-in that sets
    /// nothing (added or removed) is not a new configuration.
    package func hasSameContent(as other: EnvironmentSnapshot) -> Bool {
        guard environmentName == other.environmentName, table.count == other.table.count,
            pendingRestart == other.pendingRestart, restartRequiredKeys == other.restartRequiredKeys,
            warnings == other.warnings
        else { return false }
        let sameSources = sources == other.sources
        for (key, entry) in table {
            guard let theirs = other.table[key] else { return false }
            if sameSources {
                if entry != theirs { return false }
            } else if configuredValue(entry) != other.configuredValue(theirs) {
                return false
            }
        }
        return true
    }

    /// The leaf keys whose value or secrecy differs between `older` and this snapshot,
    /// including keys added or removed, sorted.
    package func changedKeys(since older: EnvironmentSnapshot) -> [String] {
        let mine = Set(leafKeys)
        let theirs = Set(older.leafKeys)
        return mine.union(theirs).filter { key in
            let new = table[key]
            let old = older.table[key]
            return new?.value != old?.value || new?.isSecret != old?.isSecret
        }.sorted()
    }

    /// The entry at a key path: `key` as the table spells it (canonical, see ``SettingPath``),
    /// else, if it has quotes, in its canonical spelling (`"Database".Port` is `Database.Port`).
    @inline(__always)
    func entry(forKey key: String) -> SettingEntry? {
        if let decided = table.lookup.entry(forKey: key) { return decided }
        if let entry = table[key] { return entry }
        return SettingPath.isPlain(key) ? nil : entry(canonicalizing: key)
    }

    private func entry(canonicalizing key: String) -> SettingEntry? {
        guard let canonical = SettingPath.canonical(key), canonical != key else { return nil }
        return table[canonical]
    }

    func configuredValue(_ entry: SettingEntry) -> ConfiguredValue {
        ConfiguredValue(value: entry.value, source: sources[entry.sourceIndex], isSecret: entry.isSecret)
    }

    /// Whether a value at `key` (a key path, set or not) is secret by the `Secrets` lists and
    /// the options: `key` or a key above it is listed, ignoring case (``KeyIdentity/folded(_:)``),
    /// as a value the next load sets there will be.
    package func coversAsSecret(_ key: String) -> Bool {
        Self.covers(secretKeys, key)
    }

    /// Whether a value at `key` is secret when `secretKeys` are (a `Secrets` list, or the keys a
    /// declaration marks secret): `key` or a key above it is one of them, ignoring case as
    /// ``coversAsSecret(_:)`` does.
    package static func covers(_ secretKeys: Set<String>, _ key: String) -> Bool {
        let canonical = SettingPath.canonical(key) ?? key
        return Interpolator.isSecret(canonical, in: Interpolator.folded(secretKeys))
    }

    /// The node at a key path (canonical text), rebuilt from the table (for restart-only keys).
    func node(at key: String) -> SettingNode? {
        guard let entry = table[key] else { return nil }
        // A dictionary that came from a branch has its members in the table too.
        if case .dictionary(let children) = entry.value,
            children.keys.first.map({ table[SettingPath.joined(key, $0)] != nil }) ?? true
        {
            var nodes: [String: SettingNode] = [:]
            for child in children.keys { nodes[child] = node(at: SettingPath.joined(key, child)) }
            return .branch(nodes, sources[entry.sourceIndex])
        }
        return .leaf(configuredValue(entry))
    }
}

extension EnvironmentSnapshot: ConfigurationReading {
    /// The value at a key path.
    public func value(forKey key: String) -> SettingValue? { entry(forKey: key)?.value }

    /// The snapshot itself.
    public var snapshot: EnvironmentSnapshot { self }
}

extension EnvironmentSnapshot: CustomStringConvertible {
    /// A one-line summary: environment, generation, number of keys and files.
    public var description: String {
        "environment \(environmentName)" + (instanceName.map { ", instance \($0)" } ?? "")
            + ", generation \(generation), \(leafCount) keys from "
            + (files.isEmpty ? "no files" : files.joined(separator: ", "))
    }
}
