import Environments

/// Which settings one journal entry lists, so that an entry about a load or a reload costs the
/// same bounded amount whatever the configuration's size.
///
/// A configuration of up to ``maximumSettings`` settings is listed whole, in key order. A larger
/// one lists the keys the reload changed first, then the others in key order, until
/// ``maximumSettings`` settings; the entry counts the rest and says how to see them
/// (`envctl show`). The changed keys are named, with their previous values, at most
/// ``maximumChangedKeys`` times, and the files at most ``maximumFiles`` times, each with its count.
/// Each listed value is cut at ``maximumValueBytes``, and the text of the settings and previous
/// values together stops at ``maximumBytes``.
///
/// The bounds keep one entry under journald's cap on the fields of an entry (1,024 with the
/// fields journald adds itself: past it journald drops the entry) and under a datagram's size,
/// and keep a reload that changed one key of 100,000 from writing megabytes to the journal.
struct SettingsListing {
    /// The most settings listed in one entry: 100.
    static let maximumSettings = 100
    /// The most bytes of settings and previous values (`KEY=VALUE`) listed in one entry: 64 KiB.
    static let maximumBytes = 64 << 10
    /// The most bytes of one listed value; a longer one is cut with `…` and its size: 1 KiB.
    static let maximumValueBytes = 1024
    /// The most changed keys named in one entry (each with its previous value): 100.
    static let maximumChangedKeys = 100
    /// The most files named in one entry: 100.
    static let maximumFiles = 100

    /// One listed setting.
    struct Setting {
        /// The key.
        var key: String
        /// `KEY=VALUE`, secrets redacted, the value cut at ``SettingsListing/maximumValueBytes``.
        var text: String
        /// The value's source (file and section, variable, default...).
        var source: String
    }

    /// A changed key named, with its value before the reload (`KEY=VALUE`, `nil` for a new key).
    struct Change {
        /// The key.
        var key: String
        /// `KEY=VALUE` before the reload, secrets redacted, cut as listed values are.
        var previous: String?
    }

    /// The settings listed, in order.
    private(set) var settings: [Setting] = []
    /// How many settings the configuration has.
    let total: Int
    /// The changed keys named, in the reload's order.
    private(set) var changes: [Change] = []
    /// How many keys the reload changed.
    let changedTotal: Int

    /// The listing of `snapshot` after a reload from `previous` that changed `changedKeys`
    /// (those first when the listing is cut).
    init(_ snapshot: EnvironmentSnapshot, changedKeys: [String] = [], previous: EnvironmentSnapshot? = nil) {
        var bytes = 0
        changedTotal = changedKeys.count
        for key in changedKeys.prefix(Self.maximumChangedKeys) {
            let text = previous?.configuredValue(forKey: key).map { "\(key)=\(Self.cut($0.displayValue()))" }
            guard bytes + (text?.utf8.count ?? key.utf8.count) <= Self.maximumBytes / 2 else { break }
            bytes += text?.utf8.count ?? key.utf8.count
            changes.append(Change(key: key, previous: text))
        }
        let keys = snapshot.leafKeys
        total = keys.count
        var order = keys
        if keys.count > Self.maximumSettings, !changedKeys.isEmpty {
            let changed = Set(changedKeys)
            order =
                changedKeys.filter { snapshot.configuredValue(forKey: $0) != nil }
                + keys.filter { !changed.contains($0) }
        }
        for key in order {
            guard settings.count < Self.maximumSettings else { break }
            guard let value = snapshot.configuredValue(forKey: key) else { continue }
            let text = "\(key)=\(Self.cut(value.displayValue()))"
            guard bytes + text.utf8.count <= Self.maximumBytes else { break }
            bytes += text.utf8.count
            settings.append(Setting(key: key, text: text, source: "\(value.source)"))
        }
    }

    /// How many settings are not listed.
    var unlisted: Int { total - settings.count }

    /// `value` cut at `bytes` bytes (at a character), with `…` and its size.
    static func cut(_ value: String, to bytes: Int = maximumValueBytes) -> String {
        let size = value.utf8.count
        guard size > bytes else { return value }
        var kept = ""
        var count = 0
        for character in value {
            count += character.utf8.count
            guard count <= bytes else { break }
            kept.append(character)
        }
        return kept + "… (\(size) bytes)"
    }
}
