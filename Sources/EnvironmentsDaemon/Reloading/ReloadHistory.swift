package import Environments
import EnvironmentsControl

/// The daemon's last loads and reloads, for the control socket's `History` (and
/// `envctl history` where there is no journal): oldest first, bounded in count and in size.
///
/// Limits, so that a daemon that reloads forever, or a reload that changes a million keys, keeps
/// a bounded history that fits one reply:
/// - at most ``maximumEntries`` entries; the oldest go first;
/// - at most about ``maximumBytes`` in all (the entries' text, estimated); the oldest go first,
///   and the newest entry always stays;
/// - each entry's changes at most about ``maximumEntryBytes``: beyond, only the changed keys are
///   kept (`ReloadReport/valuesOmitted`, left out when the report was made), then only as many
///   of them as fit (`ReloadReport/changedKeyCount` still counts them all).
package struct ReloadHistory: Sendable {
    /// How many entries are kept.
    package static let maximumEntries = 100
    /// About how many bytes of text the entries take at most.
    package static let maximumBytes = 768 << 10
    /// About how many bytes of text one entry's changes take at most.
    static let maximumEntryBytes = ReloadReport.maximumValueBytes

    /// The entries, oldest first: each a load or reload's report, written as `HistoryEntry`
    /// (`ReloadReport/historyJSON`).
    package private(set) var entries: [ReloadReport] = []
    /// How many older entries were dropped.
    package private(set) var dropped = 0
    private var sizes: [Int] = []
    private var totalSize = 0

    package init() {}

    /// Adds the entry of `report`, the newest (an abandoned reload has none: it changed nothing
    /// and only the log tells of it). When the report left out its values (`ReloadReport/valuesOmitted`),
    /// the entry keeps as many of its changed keys as fit ``maximumEntryBytes``.
    package mutating func append(_ report: ReloadReport) {
        guard report.outcome != .abandoned else { return }
        var entry = report
        if entry.valuesOmitted { entry.changedKeys = Self.keysThatFit(report.changedKeys) }
        let size = Self.estimatedSize(of: entry)
        entries.append(entry)
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

    /// As many of `keys`, in key order, as fit ``maximumEntryBytes`` without values.
    private static func keysThatFit(_ keys: [String]) -> [String] {
        var kept: [String] = []
        var size = 0
        for key in keys.sorted() {
            size += estimatedSize(of: SettingChangeRecord(key: key, previous: nil, value: nil))
            guard size <= maximumEntryBytes else { break }
            kept.append(key)
        }
        return kept
    }

    /// About the length of the change's JSON text.
    private static func estimatedSize(of change: SettingChangeRecord) -> Int {
        change.key.utf8.count + (change.previous?.utf8.count ?? 0) + (change.value?.utf8.count ?? 0) + 40
    }

    /// About the length of the entry's JSON text.
    private static func estimatedSize(of entry: ReloadReport) -> Int {
        var size = 300 + entry.environment.utf8.count + (entry.instance?.utf8.count ?? 0)
        for change in entry.settingChanges { size += estimatedSize(of: change) }
        if let error = entry.error {
            size +=
                error.description.utf8.count + error.message.utf8.count + (error.file?.utf8.count ?? 0)
                + (error.key?.utf8.count ?? 0) + 100
        }
        return size
    }
}
