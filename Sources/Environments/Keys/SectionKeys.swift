/// The rule that turns a section's keys into paths: the keys a section names at its own top
/// level are key paths in ``SettingPath``'s text form (`Database.Port` is `Port` inside
/// `Database`); every key below them, inside a dictionary, is one literal component.
///
/// A section is `Common`, an environment, an instance, a drop-in's section, the defaults, one
/// runtime override. So `Upstreams = { "api.example.com" = { Port = 443 } }` keeps the host
/// name as one key, while `"Upstreams.api" = 1` at the top of `Common` is `api` inside
/// `Upstreams`.
///
/// Within one section a path is set once: two top-level keys that reach the same value (nested
/// and dotted), or one that reaches below a value that is no dictionary, are an ambiguity that
/// only the hashing order of a dictionary could settle, and an error names both. Dictionaries
/// merge (an empty one with anything).
///
/// Every path is checked against ``SettingPath``'s bounds, without recursion: a file of deep or
/// long keys is refused with the key it names, not followed.
enum SectionKeys {
    /// All key paths of one section or document together, counted once per value, in bytes of
    /// their text: what the snapshot's table of paths costs, bounded whatever the file holds
    /// (a binary property list can name one long key thousands of times for a few bytes each).
    static let maximumTotalPathBytes = 64 << 20

    /// A problem with one key as written, for the caller to place (file, line).
    struct KeyProblem: Error {
        /// The keys from the section's top to the one in question, as written.
        var written: [String]
        var error: EnvironmentError
    }

    /// `values` with its top-level keys parsed as paths and inserted at them.
    ///
    /// - Parameters:
    ///   - totalPathBytes: Increased by the bytes of every path in the section; the caller
    ///     compares it with ``maximumTotalPathBytes`` (for a whole file).
    ///   - conflict: The error for two keys (as written from the section's top) that reach
    ///     one path (the canonical text): the first in key order, then the second.
    static func expand(
        _ values: [String: SettingValue], totalPathBytes: inout Int,
        conflict: (_ first: [String], _ second: [String], _ path: String) -> EnvironmentError
    ) throws(KeyProblem) -> [String: SettingValue] {
        // Nearly every section's keys are plain names within the bounds: then the section is its
        // own expansion, found in one pass without sorting (a sort of a large section's keys
        // cost more than the rest of its load). Anything else, and any error, is decided by the
        // pass in key order below, from the same start.
        if let total = plainSectionPathBytes(values, startingAt: totalPathBytes) {
            totalPathBytes = total
            return values
        }
        var needsInsertion = false
        var parsed: [(written: String, path: SettingPath, value: SettingValue)] = []
        parsed.reserveCapacity(values.count)
        // In key order, so that of two errors the same one is reported on every run.
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            let path: SettingPath
            do {
                path = try SettingPath(parsing: key)
            } catch {
                throw KeyProblem(written: [key], error: error)
            }
            if path.components.count != 1 || path.components[0] != key { needsInsertion = true }
            try checkBounds(of: value, below: path, written: key, totalPathBytes: &totalPathBytes)
            parsed.append((key, path, value))
        }
        guard needsInsertion else { return values }
        var result: [String: SettingValue] = [:]
        result.reserveCapacity(values.count)
        for (index, entry) in parsed.enumerated() {
            if let conflictPath = insert(entry.value, at: entry.path.components[...], into: &result, above: []) {
                // Named by the deeper of the two paths that meet, as the second key reaches it.
                let path = conflictPath.count >= entry.path.components.count ? conflictPath : entry.path.components
                let text = (try? SettingPath(components: path).description) ?? entry.path.description
                let first = earlierWriter(of: conflictPath, among: parsed[..<index])
                throw KeyProblem(
                    written: [entry.written],
                    error: conflict(
                        first, [entry.written] + conflictPath.dropFirst(entry.path.components.count), text))
            }
        }
        return result
    }

    /// The total of path bytes after `values`, when each of its keys is a plain name (one
    /// component: not empty, no `.` or `"`, at most ``SettingPath/maximumComponentBytes``) and
    /// everything below them is within the bounds; `nil` for anything else.
    private static func plainSectionPathBytes(_ values: [String: SettingValue], startingAt start: Int) -> Int? {
        var total = start
        for (key, value) in values {
            var key = key
            let isPlain = key.withUTF8 { bytes in
                !bytes.isEmpty && bytes.count <= SettingPath.maximumComponentBytes
                    && !bytes.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "\"") }
            }
            guard isPlain else { return nil }
            if case .dictionary = value {
                guard let path = try? SettingPath(components: [key]),
                    (try? checkBounds(of: value, below: path, written: key, totalPathBytes: &total)) != nil
                else { return nil }
            } else {
                total += key.utf8.count
                if total > maximumTotalPathBytes { return nil }
            }
        }
        // Totals only grow: within the bound at the end, they are within it in any order.
        return total <= maximumTotalPathBytes ? total : nil
    }

    /// Checks every path in `value` (nested dictionaries, not arrays) below `path` against the
    /// bounds, with a stack of its own rather than recursion.
    private static func checkBounds(
        of value: SettingValue, below path: SettingPath, written: String, totalPathBytes: inout Int
    ) throws(KeyProblem) {
        totalPathBytes += path.description.utf8.count
        guard case .dictionary(let top) = value else { return }
        // (dictionary, depth of its keys, bytes of its path's text, its keys as written)
        var stack: [(values: [String: SettingValue], depth: Int, bytes: Int, written: [String])] = [
            (top, path.components.count + 1, path.description.utf8.count, [written])
        ]
        while let (values, depth, bytes, trail) = stack.popLast() {
            for (key, child) in values {
                let keyBytes = key.utf8.count
                var childBytes = bytes + 1 + keyBytes
                if keyBytes == 0 || key.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "\"") }) {
                    childBytes = bytes + 1 + SettingPath.quoted(key).utf8.count
                }
                if depth > SettingPath.maximumDepth || keyBytes > SettingPath.maximumComponentBytes
                    || childBytes > SettingPath.maximumBytes
                {
                    // Made again the slow way, for its message.
                    var components = path.components + trail.dropFirst() + [key]
                    if components.count > SettingPath.maximumDepth + 1 {
                        components = Array(components.prefix(SettingPath.maximumDepth + 1))
                    }
                    do {
                        _ = try SettingPath(components: components)
                    } catch {
                        throw KeyProblem(written: trail + [key], error: error)
                    }
                    throw KeyProblem(
                        written: trail + [key],
                        error: SettingPath.error("past the bounds of a key path", shown: key))
                }
                totalPathBytes += childBytes
                if totalPathBytes > maximumTotalPathBytes {
                    throw KeyProblem(
                        written: trail + [key],
                        error: EnvironmentError(
                            .invalidKey,
                            "the key paths of this file take more than \(maximumTotalPathBytes >> 20) MiB together "
                                + "(each value's path counted once)",
                            hint: "Flatten deep dictionaries or shorten long keys; see Limits in the documentation"))
                }
                if case .dictionary(let nested) = child, !nested.isEmpty {
                    stack.append((nested, depth + 1, childBytes, trail + [key]))
                }
            }
        }
    }

    /// Inserts `value` at `path` in `dictionary`, merging dictionaries; the path of a conflict
    /// (a value there already, or on the way), from the top, or `nil`.
    private static func insert(
        _ value: SettingValue, at path: ArraySlice<String>, into dictionary: inout [String: SettingValue],
        above: [String]
    ) -> [String]? {
        guard let key = path.first else { return above }
        let here = above + [key]
        // Taken out while it changes, so that it is changed in place rather than copied.
        let existing = dictionary.removeValue(forKey: key)
        if path.count == 1 {
            guard let existing else {
                dictionary[key] = value
                return nil
            }
            guard case .dictionary(var children) = existing, case .dictionary(let added) = value else {
                dictionary[key] = existing
                return here
            }
            for (name, element) in added.sorted(by: { $0.key < $1.key }) {
                if let conflict = insert(element, at: [name][...], into: &children, above: here) {
                    dictionary[key] = .dictionary(children)
                    return conflict
                }
            }
            dictionary[key] = .dictionary(children)
            return nil
        }
        var children: [String: SettingValue] = [:]
        if let existing {
            guard case .dictionary(let found) = existing else {
                dictionary[key] = existing
                return here
            }
            children = found
        }
        let conflict = insert(value, at: path.dropFirst(), into: &children, above: here)
        dictionary[key] = .dictionary(children)
        return conflict
    }

    /// The keys as written of the earlier entry that set `path`, a path above it (a value that
    /// is no dictionary) or below it: its top-level key, then the keys inside its value as far
    /// as they go along `path`.
    private static func earlierWriter(
        of path: [String], among entries: ArraySlice<(written: String, path: SettingPath, value: SettingValue)>
    ) -> [String] {
        for entry in entries {
            let components = entry.path.components
            if path.starts(with: components) {
                var written = [entry.written]
                var value = entry.value
                for key in path.dropFirst(components.count) {
                    guard case .dictionary(let children) = value, let child = children[key] else { break }
                    written.append(key)
                    value = child
                }
                return written
            }
            if components.starts(with: path) { return [entry.written] }
        }
        return [entries.last?.written ?? ""]
    }
}
