/// One entry of a snapshot's table: a value, where it came from and whether it is secret,
/// in 24 bytes (the source is an index into the snapshot's list of sources).
struct SettingEntry: Sendable, Equatable {
    let value: SettingValue
    private let packed: UInt32

    init(value: SettingValue, sourceIndex: Int, isSecret: Bool) {
        self.value = value
        self.packed = UInt32(sourceIndex) << 1 | (isSecret ? 1 : 0)
    }

    var sourceIndex: Int { Int(packed >> 1) }
    var isSecret: Bool { packed & 1 != 0 }
}

/// A merged tree flattened into one table keyed by path (``SettingPath``'s canonical text), with each source stored once.
///
/// The paths and their entries are kept in two arrays, in the same order (each path once: a
/// tree's paths are distinct), which ``SettingIndex`` takes as they are: no dictionary is
/// built on the way, as no lookup is made here.
struct SettingTable {
    private(set) var paths: [String] = []
    private(set) var entries: [SettingEntry] = []
    private(set) var sources: [ValueSource] = []
    /// How many values are not dictionaries (or are empty dictionaries).
    private(set) var leafCount = 0
    private var sourceIndices: [ValueSource: Int] = [:]
    /// The source found last and its index: a section's values share one source, which is then
    /// compared (its strings by identity first) rather than hashed for every value.
    private var lastSource: (source: ValueSource, index: Int)?

    init(_ tree: [String: SettingNode]) {
        paths.reserveCapacity(tree.count)
        entries.reserveCapacity(tree.count)
        add(tree, prefix: "")
    }

    private mutating func index(of source: ValueSource) -> Int {
        if let lastSource, lastSource.source == source { return lastSource.index }
        let index: Int
        if let known = sourceIndices[source] {
            index = known
        } else {
            sources.append(source)
            index = sources.count - 1
            sourceIndices[source] = index
        }
        lastSource = (source, index)
        return index
    }

    private mutating func append(_ path: String, _ entry: SettingEntry) {
        paths.append(path)
        entries.append(entry)
    }

    /// Adds every path below `tree`, building each branch's dictionary and secrecy once from
    /// its children's, so the cost stays linear however deep the tree is.
    ///
    /// - Returns: The values of `tree` itself as a dictionary, and whether any is secret.
    @discardableResult
    private mutating func add(_ tree: [String: SettingNode], prefix: String) -> (
        values: [String: SettingValue], containsSecret: Bool
    ) {
        var values: [String: SettingValue] = [:]
        let collectingValues = !prefix.isEmpty
        if collectingValues { values.reserveCapacity(tree.count) }
        var containsSecret = false
        for (key, node) in tree {
            let path = SettingPath.joined(prefix, key)
            switch node {
            case .leaf(let configured):
                append(
                    path,
                    SettingEntry(
                        value: configured.value, sourceIndex: index(of: configured.source),
                        isSecret: configured.isSecret))
                if collectingValues { values[key] = configured.value }
                containsSecret = containsSecret || configured.isSecret
                if case .dictionary(let dictionary) = configured.value, !dictionary.isEmpty {
                } else {
                    leafCount += 1
                }
            case .branch(let children, let source):
                if children.isEmpty { leafCount += 1 }
                let (childValues, childSecret) = add(children, prefix: path)
                let value = SettingValue.dictionary(childValues)
                append(path, SettingEntry(value: value, sourceIndex: index(of: source), isSecret: childSecret))
                if collectingValues { values[key] = value }
                containsSecret = containsSecret || childSecret
            }
        }
        return (values, containsSecret)
    }
}
