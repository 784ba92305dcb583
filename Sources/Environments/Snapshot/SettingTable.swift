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
struct SettingTable {
    private(set) var entries: [String: SettingEntry] = [:]
    private(set) var sources: [ValueSource] = []
    /// The paths of values that are not dictionaries (and of empty dictionaries), unsorted.
    private(set) var leaves: [String] = []
    private var sourceIndices: [ValueSource: Int] = [:]

    init(_ tree: [String: SettingNode]) {
        entries.reserveCapacity(tree.count)
        leaves.reserveCapacity(tree.count)
        add(tree, prefix: "")
    }

    private mutating func index(of source: ValueSource) -> Int {
        if let index = sourceIndices[source] { return index }
        sources.append(source)
        sourceIndices[source] = sources.count - 1
        return sources.count - 1
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
                entries[path] = SettingEntry(
                    value: configured.value, sourceIndex: index(of: configured.source), isSecret: configured.isSecret)
                if collectingValues { values[key] = configured.value }
                containsSecret = containsSecret || configured.isSecret
                if case .dictionary(let dictionary) = configured.value, !dictionary.isEmpty {
                } else {
                    leaves.append(path)
                }
            case .branch(let children, let source):
                if children.isEmpty { leaves.append(path) }
                let (childValues, childSecret) = add(children, prefix: path)
                let value = SettingValue.dictionary(childValues)
                entries[path] = SettingEntry(value: value, sourceIndex: index(of: source), isSecret: childSecret)
                if collectingValues { values[key] = value }
                containsSecret = containsSecret || childSecret
            }
        }
        return (values, containsSecret)
    }
}
