/// A key written more than once in one dictionary of a property list: the same key by
/// ``KeyIdentity/isSame(_:_:)``, in whatever Unicode form each copy spells it.
///
/// Property-list readers keep the last copy (Apple's XML reader, Python's `plistlib`), and so
/// do ours, for XML and binary files alike (the last copy's value and spelling); the parsers
/// record every duplicate so that it can be reported rather than pass silently. (Foundation's
/// binary reader keeps the first copy, and compares keys code unit by code unit;
/// ``PropertyListDocument`` makes it read the last.)
struct PropertyListDuplicateKey: Sendable, Hashable, CustomStringConvertible {
    /// The key path of the dictionary from the root: its keys, literally (a key may hold dots),
    /// and `[N]` for the element at index N of an array. Empty for the root dictionary.
    let path: [String]
    /// The key written more than once.
    let key: String
    /// The line of the first copy (XML; `nil` in a binary property list, which has no lines).
    let firstLine: Int?
    /// The line of this copy, which replaces every earlier one (XML; `nil` in a binary file).
    let line: Int?
    /// The first copy's spelling when it differs from ``key``'s in Unicode form only (one key
    /// by ``KeyIdentity``: `é` precomposed and decomposed), else `nil`.
    var firstSpelling: String? = nil

    var description: String {
        let place = (path + [key]).map { "'\($0)'" }.joined(separator: " > ")
        guard let firstLine, let line else { return "\(place) is written more than once" }
        return "\(place) is written again on line \(line) (first on line \(firstLine))"
    }
}

/// The duplicate keys a parse found: the first ``maximumListed`` of them, and how many more.
struct PropertyListDuplicateKeys: Sendable, Hashable {
    /// The most duplicates listed one by one; a file with more is counted beyond.
    static let maximumListed = 100

    /// The first duplicates found, in document order of the later copy, at most ``maximumListed``.
    private(set) var listed: [PropertyListDuplicateKey] = []
    /// Duplicates found beyond the first ``maximumListed``.
    private(set) var unlisted = 0

    /// Whether another duplicate would be listed rather than counted.
    var isFull: Bool { listed.count >= Self.maximumListed }

    /// All duplicates found.
    var count: Int { listed.count + unlisted }

    mutating func append(_ duplicate: PropertyListDuplicateKey) {
        if isFull {
            unlisted += 1
        } else {
            listed.append(duplicate)
        }
    }

    /// Counts a duplicate past the cap, without making it.
    mutating func countUnlisted() {
        unlisted += 1
    }
}
