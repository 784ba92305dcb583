package import Environments
package import EnvironmentsControl

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The daemon's last loads and reloads, for the control socket's `History` (and
/// `envctl history` where there is no journal): oldest first, bounded in count and in size.
///
/// Limits, so that a daemon that reloads forever, or a reload that changes a million keys, keeps
/// a bounded history that fits one reply:
/// - at most ``maximumEntries`` entries; the oldest go first;
/// - at most about ``maximumBytes`` in all (the entries' text, estimated); the oldest go first,
///   and the newest entry always stays;
/// - each entry's changes at most about ``maximumEntryBytes``: beyond, only the changed keys are
///   kept (``ReloadHistoryRecord/valuesOmitted``), then only as many of them as fit
///   (``ReloadHistoryRecord/changedKeyCount`` still counts them all).
package struct ReloadHistory: Sendable {
    /// How many entries are kept.
    package static let maximumEntries = 100
    /// About how many bytes of text the entries take at most.
    package static let maximumBytes = 768 << 10
    /// About how many bytes of text one entry's changes take at most.
    static let maximumEntryBytes = 128 << 10

    /// The entries, oldest first.
    package private(set) var entries: [ReloadHistoryRecord] = []
    /// How many older entries were dropped.
    package private(set) var dropped = 0
    private var sizes: [Int] = []
    private var totalSize = 0

    package init() {}

    /// Adds the entry of `record`, the newest (an abandoned reload has none: it changed nothing
    /// and only the log tells of it).
    mutating func append(_ record: ReloadRecord) {
        guard record.outcome != .abandoned else { return }
        var entry = ReloadHistoryRecord(
            time: Self.timestamp(record.finished), outcome: record.outcome, generation: Int(record.generation),
            environment: record.configuration.environmentName, instance: record.configuration.instanceName,
            trigger: record.triggerName, callerUID: record.cause?.callerUID.map(Int.init),
            callerUnit: record.cause?.callerUnit,
            fleetRevision: record.cause?.revision.map(Int.init), pid: Int(getpid()))
        if let change = record.change {
            let kept = Self.changes(of: change.changedKeys, from: change.previous, to: change.current)
            entry.changes = kept.changes
            entry.valuesOmitted = kept.valuesOmitted
            entry.changedKeyCount = change.changedKeys.count
        }
        entry.error = record.error.map(ConfigurationErrorRecord.init)
        append(entry)
    }

    /// Adds the newest entry, dropping the oldest beyond the limits.
    package mutating func append(_ record: ReloadHistoryRecord) {
        let size = Self.estimatedSize(of: record)
        entries.append(record)
        sizes.append(size)
        totalSize += size
        var first = 0
        while entries.count - first > Self.maximumEntries
            || (totalSize > Self.maximumBytes && entries.count - first > 1)
        {
            totalSize -= sizes[first]
            first += 1
        }
        if first > 0 {
            entries.removeFirst(first)
            sizes.removeFirst(first)
            dropped += first
        }
    }

    /// The changes from `previous` to `current` of `keys`, as ``ReloadHistoryRecord`` keeps
    /// them: values as `envctl show` prints them, within ``maximumEntryBytes``.
    package static func changes(
        of keys: [String], from previous: EnvironmentSnapshot?, to current: EnvironmentSnapshot
    ) -> (changes: [SettingChangeRecord], valuesOmitted: Bool) {
        var changes: [SettingChangeRecord] = []
        var size = 0
        for key in keys.sorted() {
            let change = SettingChangeRecord(
                key: key, previous: previous?.configuredValue(forKey: key)?.displayValue(),
                value: current.configuredValue(forKey: key)?.displayValue())
            size += estimatedSize(of: change)
            guard size <= maximumEntryBytes else { return (keysOnly(keys), true) }
            changes.append(change)
        }
        return (changes, false)
    }

    /// As many of `keys` as fit ``maximumEntryBytes``, without values.
    private static func keysOnly(_ keys: [String]) -> [SettingChangeRecord] {
        var changes: [SettingChangeRecord] = []
        var size = 0
        for key in keys.sorted() {
            let change = SettingChangeRecord(key: key, previous: nil, value: nil)
            size += estimatedSize(of: change)
            guard size <= maximumEntryBytes else { break }
            changes.append(change)
        }
        return changes
    }

    /// About the length of the change's JSON text.
    private static func estimatedSize(of change: SettingChangeRecord) -> Int {
        change.key.utf8.count + (change.previous?.utf8.count ?? 0) + (change.value?.utf8.count ?? 0) + 40
    }

    /// About the length of the record's JSON text.
    private static func estimatedSize(of record: ReloadHistoryRecord) -> Int {
        var size = 300 + record.environment.utf8.count + (record.instance?.utf8.count ?? 0)
        for change in record.changes { size += estimatedSize(of: change) }
        if let error = record.error {
            size +=
                error.description.utf8.count + error.message.utf8.count + (error.file?.utf8.count ?? 0)
                + (error.key?.utf8.count ?? 0) + 100
        }
        return size
    }

    /// The time of an entry: now, ISO 8601 with milliseconds, UTC.
    package static func timestamp(_ date: Date = Date()) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

extension ConfigurationErrorRecord {
    /// How the history and the control socket give `error`.
    init(_ error: EnvironmentError) {
        self.init(
            code: "\(error.code)", message: error.message, description: error.description, key: error.key,
            file: error.file, line: error.line)
    }
}
