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

    /// Turns dotted keys (`Database.Port`) into nested dictionaries, at every depth (a key
    /// `Pool.Size` inside `Database` is `Database.Pool.Size`), so that one path is one node
    /// whichever way it was written.
    ///
    /// Within one set of values (a file's section, the defaults, one override) a path may be
    /// set once: the same path written nested and dotted, or a path below one that holds a
    /// value that is no dictionary, is an ambiguity nothing could settle but the order in
    /// which a hashed dictionary happens to list its keys; `conflict` makes the error for it
    /// from the two keys as written (each a list of keys from the top, outermost first), in a
    /// fixed order. Empty dictionaries merge with any dictionary. Dictionaries in arrays are
    /// values, not paths, and keep their keys.
    static func expandingDottedKeys(
        _ values: [String: SettingValue], conflict: (_ first: [String], _ second: [String]) -> EnvironmentError
    ) throws(EnvironmentError) -> [String: SettingValue] {
        guard containsDottedKey(values) else { return values }
        if let expanded = inserting(values) { return expanded }
        // An ambiguity: found again the slow way, in key order, so that the same one is
        // reported on every run.
        return try expanding(values, written: [], conflict: conflict)
    }

    /// `values`, which holds a dotted key somewhere, expanded in place: each dotted key is
    /// taken out and inserted at its path. `nil` for an ambiguity (the rules of
    /// ``expandingDottedKeys(_:conflict:)``), whichever one is met first.
    private static func inserting(_ values: [String: SettingValue]) -> [String: SettingValue]? {
        var result = values
        var dotted: [(path: [String], value: SettingValue)] = []
        for (key, value) in values {
            var value = value
            if case .dictionary(let dictionary) = value, containsDottedKey(dictionary) {
                guard let expanded = inserting(dictionary) else { return nil }
                value = .dictionary(expanded)
                if !key.utf8.contains(UInt8(ascii: ".")) { result[key] = value }
            }
            if key.utf8.contains(UInt8(ascii: ".")) {
                result.removeValue(forKey: key)
                dotted.append((key.split(separator: ".", omittingEmptySubsequences: false).map(String.init), value))
            }
        }
        for (path, value) in dotted {
            guard insert(value, at: path[...], into: &result) else { return nil }
        }
        return result
    }

    /// Inserts `value` (expanded already) at `path` in `dictionary`, merging dictionaries;
    /// `false` if a value is there already or on the way (an empty dictionary merges).
    private static func insert(
        _ value: SettingValue, at path: ArraySlice<String>, into dictionary: inout [String: SettingValue]
    ) -> Bool {
        guard let key = path.first else { return false }
        // Taken out while it changes, and held by `children` alone, so that it is changed in
        // place rather than copied (which would make each insertion cost the whole dictionary).
        var existing = dictionary.removeValue(forKey: key)
        var children: [String: SettingValue] = [:]
        var isDictionary = false
        if case .dictionary(let found)? = existing {
            children = found
            isDictionary = true
        }
        if isDictionary { existing = nil }
        if path.count == 1 {
            if existing == nil && !isDictionary {
                dictionary[key] = value
                return true
            }
            guard isDictionary, case .dictionary(let added) = value else { return false }
            for (name, element) in added where !insert(element, at: [name][...], into: &children) {
                return false
            }
            dictionary[key] = .dictionary(children)
            return true
        }
        guard existing == nil else { return false }
        let inserted = insert(value, at: path.dropFirst(), into: &children)
        dictionary[key] = .dictionary(children)
        return inserted
    }

    /// `values`, which holds a dotted key somewhere, expanded; `written` is the keys above it.
    ///
    /// Only keys that share their first component with another key or hold a dot are taken
    /// apart and sorted; the others are kept (or, if a dotted key is below them, expanded
    /// the same way), so a large configuration with a few dotted keys costs little more.
    private static func expanding(
        _ values: [String: SettingValue], written: [String],
        conflict: (_ first: [String], _ second: [String]) -> EnvironmentError
    ) throws(EnvironmentError) -> [String: SettingValue] {
        var groups: [Substring: [String]] = [:]
        for key in values.keys {
            groups[key.prefix { $0 != "." }, default: []].append(key)
        }
        var result: [String: SettingValue] = [:]
        result.reserveCapacity(groups.count)
        // In order, so that of two errors the same one is reported on every run.
        for first in groups.keys.sorted() {
            let keys = groups[first] ?? []
            if keys.count == 1, keys[0].utf8.count == first.utf8.count, let value = values[keys[0]] {
                if case .dictionary(let dictionary) = value, containsDottedKey(dictionary) {
                    result[keys[0]] = .dictionary(
                        try expanding(dictionary, written: written + [keys[0]], conflict: conflict))
                } else {
                    result[keys[0]] = value
                }
                continue
            }
            var entries: [DottedEntry] = []
            for key in keys {
                if let value = values[key] { collect([key: value], path: [], written: written, into: &entries) }
            }
            entries.sort {
                $0.path != $1.path
                    ? $0.path.lexicographicallyPrecedes($1.path) : $0.written.lexicographicallyPrecedes($1.written)
            }
            // Sorted by path, every path below P comes right after P (and after other entries at P).
            for index in entries.indices.dropFirst() {
                let (first, second) = (entries[index - 1], entries[index])
                let bothEmpty = first.isEmptyDictionary && second.isEmptyDictionary
                if first.path == second.path
                    ? !bothEmpty : !first.isEmptyDictionary && second.path.starts(with: first.path)
                {
                    throw conflict(first.written, second.written)
                }
            }
            result.merge(build(entries[...], depth: 0)) { _, new in new }
        }
        return result
    }

    /// One value of a set being expanded: its path, its keys as written, and the value (no
    /// dictionary, or an empty one).
    private struct DottedEntry {
        let path: [String]
        let written: [String]
        let value: SettingValue
        var isEmptyDictionary: Bool {
            if case .dictionary(let dictionary) = value { return dictionary.isEmpty }
            return false
        }
    }

    /// Whether a key at any depth (outside arrays) holds a dot.
    private static func containsDottedKey(_ values: [String: SettingValue]) -> Bool {
        for (key, value) in values {
            if key.utf8.contains(UInt8(ascii: ".")) { return true }
            if case .dictionary(let dictionary) = value, containsDottedKey(dictionary) { return true }
        }
        return false
    }

    private static func collect(
        _ values: [String: SettingValue], path: [String], written: [String], into entries: inout [DottedEntry]
    ) {
        for (key, value) in values {
            let path = path + key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let written = written + [key]
            if case .dictionary(let dictionary) = value, !dictionary.isEmpty {
                collect(dictionary, path: path, written: written, into: &entries)
            } else {
                entries.append(DottedEntry(path: path, written: written, value: value))
            }
        }
    }

    /// The nested dictionary of sorted entries without conflicts, which share their first
    /// `depth` components.
    private static func build(_ entries: ArraySlice<DottedEntry>, depth: Int) -> [String: SettingValue] {
        var result: [String: SettingValue] = [:]
        var start = entries.startIndex
        while start < entries.endIndex {
            let key = entries[start].path[depth]
            var end = start + 1
            while end < entries.endIndex, entries[end].path[depth] == key { end += 1 }
            let group = entries[start..<end]
            if group.count == 1, group[start].path.count == depth + 1 {
                result[key] = group[start].value
            } else {
                // An empty dictionary at this path merges with what is below it.
                let below = group.filter { $0.path.count > depth + 1 }
                result[key] = .dictionary(build(below[...], depth: depth + 1))
            }
            start = end
        }
        return result
    }

    /// How `conflict` errors name a key as written: `'Database.Host'`, or `'Database' > 'Host'`
    /// for a key inside a dictionary.
    static func describe(written: [String]) -> String {
        written.map { "'\(Interpolator.shown($0))'" }.joined(separator: " > ")
    }

    /// The error for two keys of one set of values that reach the same path (see
    /// ``expandingDottedKeys(_:conflict:)``), in `place` (`Common in this file`, `the defaults`).
    static func conflictError(
        _ first: [String], _ second: [String], in place: String, code: EnvironmentError.Code, file: String? = nil,
        lines: (Int?, Int?) = (nil, nil)
    ) -> EnvironmentError {
        func at(_ line: Int?) -> String { line.map { " (line \($0))" } ?? "" }
        let firstPath = first.joined(separator: ".")
        let secondPath = second.joined(separator: ".")
        let message =
            firstPath == secondPath
            ? "'\(Interpolator.shown(firstPath))' is set twice in \(place): by \(describe(written: first))\(at(lines.0)) and by \(describe(written: second))\(at(lines.1))"
            : "'\(Interpolator.shown(secondPath))' in \(place), set by \(describe(written: second))\(at(lines.1)), is below '\(Interpolator.shown(firstPath))', which \(describe(written: first))\(at(lines.0)) sets to a value that is no dictionary"
        return EnvironmentError(
            code, message, key: secondPath, file: file, line: lines.1 ?? lines.0,
            hint:
                "A dotted key names the same path as nested dictionaries: set each path once here, either way (a later layer may override it)"
        )
    }

    /// The node at a dotted path.
    static func node(at path: [String], in tree: [String: SettingNode]) -> SettingNode? {
        guard let first = path.first, let node = tree[first] else { return nil }
        if path.count == 1 { return node }
        guard case .branch(let children, _) = node else { return nil }
        return self.node(at: Array(path.dropFirst()), in: children)
    }

    /// Replaces (or, with `nil`, removes) the node at a dotted path, creating branches on the way.
    static func setNode(_ node: SettingNode?, at path: [String], in tree: inout [String: SettingNode]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            tree[first] = node
            return
        }
        var children: [String: SettingNode] = [:]
        var source = node?.source ?? .defaults
        if case .branch(let existing, let existingSource)? = tree[first] {
            children = existing
            source = existingSource
        }
        setNode(node, at: Array(path.dropFirst()), in: &children)
        tree[first] = .branch(children, source)
    }

    /// Every path in the tree (branches and leaves) with its node.
    static func flatten(_ tree: [String: SettingNode], prefix: String = "", into result: inout [String: SettingNode]) {
        for (key, node) in tree {
            let path = prefix.isEmpty ? key : prefix + "." + key
            result[path] = node
            if case .branch(let children, _) = node { flatten(children, prefix: path, into: &result) }
        }
    }
}
