/// A node of the merged configuration tree: a value, or a dictionary of nodes.
///
/// Dictionaries are kept as branches so that layers merge key by key and each leaf keeps
/// its own provenance.
indirect enum SettingNode: Sendable, Hashable {
    case leaf(ConfiguredValue)
    case branch([String: SettingNode], ValueSource)

    /// The node's value, with branches turned back into dictionaries.
    var value: SettingValue {
        switch self {
        case .leaf(let configured): configured.value
        case .branch(let children, _): .dictionary(children.mapValues(\.value))
        }
    }

    /// The layer that last wrote this node.
    var source: ValueSource {
        switch self {
        case .leaf(let configured): configured.source
        case .branch(_, let source): source
        }
    }

    /// Whether this node or anything below it is secret.
    var containsSecret: Bool {
        switch self {
        case .leaf(let configured): configured.isSecret
        case .branch(let children, _): children.values.contains { $0.containsSecret }
        }
    }

    /// The node with the same values but sources ignored, to compare contents.
    var contentIgnoringSources: SettingNode {
        switch self {
        case .leaf(let configured):
            .leaf(ConfiguredValue(value: configured.value, source: .defaults, isSecret: configured.isSecret))
        case .branch(let children, _): .branch(children.mapValues(\.contentIgnoringSources), .defaults)
        }
    }
}

/// Operations on a tree of nodes keyed by name.
enum SettingTree {
    /// Merges `layer` into `tree`: dictionaries merge key by key, anything else replaces.
    static func merge(_ layer: [String: SettingValue], into tree: inout [String: SettingNode], source: ValueSource) {
        if tree.isEmpty {
            // The first layer (most configurations have one file with one section): its nodes,
            // made in the layer's own hash table, without hashing a key again.
            tree = nodes(of: layer, source: source)
            return
        }
        tree.reserveCapacity(tree.count + layer.count)
        for (key, value) in layer {
            if case .dictionary(let dictionary) = value {
                var children: [String: SettingNode] = [:]
                if case .branch(let existing, _)? = tree[key] { children = existing }
                merge(dictionary, into: &children, source: source)
                tree[key] = .branch(children, source)
            } else {
                tree[key] = .leaf(ConfiguredValue(value: value, source: source))
            }
        }
    }

    /// `layer` as a tree on its own: what ``merge(_:into:source:)`` makes of it in an empty tree.
    private static func nodes(of layer: [String: SettingValue], source: ValueSource) -> [String: SettingNode] {
        layer.mapValues { value in
            if case .dictionary(let dictionary) = value {
                return .branch(nodes(of: dictionary, source: source), source)
            }
            return .leaf(ConfiguredValue(value: value, source: source))
        }
    }

    /// How `conflict` errors name a key as written: `'Database.Host'`, or `'Database' > 'Host'`
    /// for a key inside a dictionary.
    static func describe(written: [String]) -> String {
        written.map { "'\(Sentences.shown($0))'" }.joined(separator: " > ")
    }

    /// The error for two keys of one section that reach one path (see ``SectionKeys``), in
    /// `place` (`Common in this file`, `the defaults`); `path` is the path's canonical text.
    static func conflictError(
        _ first: [String], _ second: [String], path: String, in place: String, code: EnvironmentError.Code,
        file: String? = nil, lines: (Int?, Int?) = (nil, nil)
    ) -> EnvironmentError {
        func at(_ line: Int?) -> String { line.map { " (line \($0))" } ?? "" }
        let shownPath = Sentences.shown(path)
        let message =
            "'\(shownPath)' is set twice in \(place): by \(describe(written: first))\(at(lines.0)) and by "
            + "\(describe(written: second))\(at(lines.1)) (a path is set once in a section, nested or dotted, "
            + "and nothing goes below a value that is no dictionary)"
        return EnvironmentError(
            code, message, key: path, file: file, line: lines.1 ?? lines.0,
            hint:
                "A dotted key names the same path as nested dictionaries: set each path once here, either way (a later layer may override it)"
        )
    }

    /// The node at a path (its components).
    static func node(at path: [String], in tree: [String: SettingNode]) -> SettingNode? {
        guard let first = path.first, let node = tree[first] else { return nil }
        if path.count == 1 { return node }
        guard case .branch(let children, _) = node else { return nil }
        return self.node(at: Array(path.dropFirst()), in: children)
    }

    /// Replaces (or, with `nil`, removes) the node at a path, creating branches on the way.
    static func setNode(_ node: SettingNode?, at path: [String], in tree: inout [String: SettingNode]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            tree[first] = node
            return
        }
        var children: [String: SettingNode] = [:]
        var source = node?.source ?? .defaults
        // Taken out while it changes, so that its dictionary is changed in place, not copied
        // (which would make each of many settings at one level cost the whole level).
        if case .branch(let existing, let existingSource)? = tree.removeValue(forKey: first) {
            children = existing
            source = existingSource
        }
        setNode(node, at: Array(path.dropFirst()), in: &children)
        tree[first] = .branch(children, source)
    }

    /// Every path in the tree (branches and leaves) with its node, keyed by canonical text.
    static func flatten(_ tree: [String: SettingNode], prefix: String = "", into result: inout [String: SettingNode]) {
        for (key, node) in tree {
            let path = SettingPath.joined(prefix, key)
            result[path] = node
            if case .branch(let children, _) = node { flatten(children, prefix: path, into: &result) }
        }
    }
}
