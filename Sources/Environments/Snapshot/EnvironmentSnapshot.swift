import Foundation

/// One complete, immutable configuration: every effective value with its source, for one
/// environment, at one generation.
///
/// A reload builds a whole new snapshot and swaps it in at once, so a reader that holds a
/// snapshot never sees a mix of old and new values. Snapshots are `Sendable` and can be
/// read from any thread.
public final class EnvironmentSnapshot: Sendable {
    /// The selected environment, for example `Production`.
    public let environmentName: String
    /// Counts applied configurations: 1 for the first load, one more for each applied reload.
    public let generation: UInt64
    /// Every effective key path (dictionaries and their members) with its value.
    public let entries: [String: ConfiguredValue]
    /// The files that were read, in the order they were applied.
    public let files: [String]
    /// Where the configuration was looked for, for error messages.
    public let location: ConfigurationLocation?
    /// Key paths whose values are secret (from `Secrets` arrays and the options).
    public let secretKeys: Set<String>
    /// Key paths that cannot change without a restart.
    public let restartRequiredKeys: Set<String>
    /// Restart-only keys whose new value is waiting for a restart, with that new value.
    /// The snapshot itself still holds the old value.
    public let pendingRestart: [String: ConfiguredValue]
    /// When the snapshot was built.
    public let loadedAt: Date
    /// The key paths of values that are not dictionaries, sorted: what a listing shows.
    public let leafKeys: [String]

    let tree: [String: SettingNode]
    /// The values of ``entries`` alone, for the hot read path: a lookup copies one
    /// ``SettingValue`` and touches no source strings (whose reference counts every thread
    /// would otherwise share).
    let valuesByKey: [String: SettingValue]
    /// The values as ``SettingValue/anyValue`` gives them, made once, for `fetch`: copying an
    /// `Any` out costs less than building one on every read. Only property-list values are
    /// in it (strings, numbers, dates, data, arrays and dictionaries of them), all `Sendable`.
    nonisolated(unsafe) let anyValuesByKey: [String: Any]
    /// The key paths whose values are secret (listed, below a secret key, or from a
    /// credential), for readers that look values up in ``valuesByKey`` alone.
    package let secretPaths: Set<String>

    init(
        environmentName: String,
        generation: UInt64,
        tree: [String: SettingNode],
        files: [String],
        location: ConfigurationLocation?,
        secretKeys: Set<String>,
        restartRequiredKeys: Set<String>,
        pendingRestart: [String: ConfiguredValue]
    ) {
        self.environmentName = environmentName
        self.generation = generation
        self.tree = tree
        var entries: [String: ConfiguredValue] = [:]
        entries.reserveCapacity(tree.count)
        var leaves: [String] = []
        leaves.reserveCapacity(tree.count)
        SettingTree.flattenValues(tree, into: &entries, leaves: &leaves, collectingValues: false)
        self.entries = entries
        self.leafKeys = leaves.sorted()
        self.valuesByKey = entries.mapValues(\.value)
        self.anyValuesByKey = valuesByKey.mapValues(\.anyValue)
        self.secretPaths = Set(entries.lazy.filter { $0.value.isSecret }.map(\.key))
        self.files = files
        self.location = location
        self.secretKeys = secretKeys
        self.restartRequiredKeys = restartRequiredKeys
        self.pendingRestart = pendingRestart
        self.loadedAt = Date()
    }

    /// The whole effective configuration as one dictionary.
    public var values: [String: SettingValue] { tree.mapValues(\.value) }

    /// Whether `other` has the same environment, values, sources, files and pending restarts.
    /// The generation and load time are not compared.
    public func hasSameContent(as other: EnvironmentSnapshot) -> Bool {
        environmentName == other.environmentName && entries == other.entries && files == other.files
            && pendingRestart == other.pendingRestart
    }

    /// The leaf keys whose value or secrecy differs between `older` and this snapshot,
    /// including keys added or removed, sorted.
    public func changedKeys(since older: EnvironmentSnapshot) -> [String] {
        let mine = Set(leafKeys)
        let theirs = Set(older.leafKeys)
        return mine.union(theirs).filter { key in
            let new = entries[key]
            let old = older.entries[key]
            return new?.value != old?.value || new?.isSecret != old?.isSecret
        }.sorted()
    }
}

extension EnvironmentSnapshot: ConfigurationReading {
    /// The effective value at a key path, with its source.
    public func configuredValue(forKey key: String) -> ConfiguredValue? { entries[key] }

    /// The snapshot itself.
    public var currentSnapshot: EnvironmentSnapshot { self }
}

extension EnvironmentSnapshot: CustomStringConvertible {
    /// A one-line summary: environment, generation, number of keys and files.
    public var description: String {
        "environment \(environmentName), generation \(generation), \(leafKeys.count) keys from "
            + (files.isEmpty ? "no files" : files.joined(separator: ", "))
    }
}
