#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Settings from the process environment: with the prefix `APP_`, `APP_Database__Port=6432`
/// sets `Database.Port` (`__` for each level of nesting), as .NET's configuration and
/// pydantic-settings read them.
///
/// The layer sits above the files and below runtime overrides. Its rules:
/// - A variable names a key by its spelling; a level that no file or default spells that way
///   is matched ignoring case (`APP_DATABASE__PORT` sets `Database.Port`, and `APP_STRASSE`
///   sets `Straße`: ``KeyIdentity/folded(_:)``), and two keys that differ only in case make
///   that an error. The keys listed in `Secrets` and `RestartRequired` count as spelled too,
///   so `APP_DATABASE__PASSWORD` sets the secret `Database.Password` even where no file sets
///   it. A key no layer below has is added as a string. Each level is one component of a
///   ``SettingPath``, within its bounds.
/// - Variables in the shapes Kubernetes gives a Service's links (`APP_PORT=tcp://ADDRESS:80`,
///   `APP_SERVICE_HOST=ADDRESS`, `APP_PORT_80_TCP_PROTO=tcp`...) for a Service whose name is the
///   prefix's are not keys: name and value both in that shape (``isServiceLink(_:value:)``).
/// - The value takes the type of the value it replaces: an integer key stays an integer (a
///   value that does not parse is an error naming the variable), and likewise real numbers,
///   booleans (`true`/`false`, `yes`/`no`, `1`/`0`), dates (ISO 8601) and data (base64). An
///   array or a dictionary cannot be replaced by one variable (a dictionary's keys can, each).
/// - The text is used as it is: a `${` in it is not interpolated.
/// - The variables that select the environment and the instance (`APP_ENVIRONMENT`,
///   `APP_INSTANCE`) are not keys.
struct VariableOverrides {
    /// The variables' common prefix, `APP_`.
    let prefix: String
    /// Variables with the prefix that are not keys.
    let excluded: Set<String>
    /// The process environment.
    let variables: [String: String]

    /// Key paths spelled by lists rather than values (`Secrets`, `RestartRequired`): a level
    /// of a variable matches their spelling as it matches a file's.
    let declared: [Set<String>]

    /// - Parameter declared: Key paths (``SettingPath`` text) that name levels beside the
    ///   tree's, in several sets: they are joined only when a variable needs them.
    init(prefix: String, options: EnvironmentOptions, declared: [Set<String>] = []) {
        self.prefix = prefix
        self.excluded = [options.environmentVariable, options.instanceVariable]
        self.variables = options.processEnvironment
        self.declared = declared
    }

    /// The variables that set keys, in name order (byte by byte), so that errors come in the
    /// same order on every run.
    var names: [String] {
        variables.keys
            .filter { name in
                name.hasPrefix(prefix) && !excluded.contains(name)
                    && !Self.isServiceLink(String(name.dropFirst(prefix.count)), value: variables[name] ?? "")
            }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Applies every variable to `tree`, the merged files and defaults before interpolation.
    ///
    /// Costs grow with the number of variables and the size of the levels they name, not their
    /// product: each level's spellings are indexed once, ignoring case.
    ///
    /// - Parameter secretPaths: The secret keys: a value that does not parse is not quoted for them.
    /// - Returns: Each variable applied, with the key path it set, in name order.
    @discardableResult
    func apply(to tree: inout [String: SettingNode], environment: String, secretPaths: Set<String>)
        throws(EnvironmentError) -> [(variable: String, path: [String])]
    {
        let names = self.names
        guard !names.isEmpty else { return [] }
        // Folded and parsed only when a variable needs them: a program with 10,000 declared or
        // secret keys and no variables pays nothing here.
        var applied: [(variable: String, path: [String])] = []
        let foldedSecrets = Interpolator.folded(secretPaths)
        let paths = declared.reduce(into: Set<String>()) { $0.formUnion($1) }
        var spellings = Spellings(declared: paths.sorted().compactMap { try? SettingPath(parsing: $0).components })
        var setBy: [String: String] = [:]  // key path -> variable, to report two that meet
        for name in names {
            guard let text = variables[name] else { continue }
            let path = try keyPath(of: name, in: tree, spellings: &spellings, environment: environment)
            let key: String
            do {
                key = try SettingPath(components: path).description
            } catch {
                var error = error
                error.message = "$\(Sentences.shown(name)) names no key: " + error.message
                error.environment = environment
                error.hint = "Rename or unset $\(Sentences.shown(name)); see Limits in the documentation"
                throw error
            }
            if let other = setBy[key] {
                throw EnvironmentError(
                    .invalidSection,
                    "$\(Sentences.shown(other)) and $\(Sentences.shown(name)) both set '\(Sentences.shown(key))'",
                    key: key, environment: environment, hint: "Unset one of them")
            }
            setBy[key] = name
            let existing = SettingTree.node(at: path, in: tree)
            let value = try typed(
                text, like: existing, key: key, variable: name, environment: environment,
                isSecret: Interpolator.isSecret(key, in: foldedSecrets))
            let source = ValueSource(layer: .environmentVariable, section: name)
            SettingTree.setNode(.leaf(ConfiguredValue(value: value, source: source)), at: path, in: &tree)
            spellings.add(path)
            applied.append((name, path))
        }
        return applied
    }

    /// The spellings of keys at each level, by their folded form (``KeyIdentity/folded(_:)``),
    /// as far as variables look: built for a level the first time a variable reaches it, from
    /// the tree and the declared paths, and added to as variables make keys.
    private struct Spellings {
        /// Level (the canonical text of its path; empty for the top) -> folded name -> names.
        var levels: [String: [String: [String]]] = [:]
        /// Declared paths by the canonical text of each of their levels: level -> names there.
        var declared: [String: Set<String>] = [:]

        init(declared paths: [[String]]) {
            for path in paths {
                var level = ""
                for component in path {
                    declared[level, default: []].insert(component)
                    level = SettingPath.joined(level, component)
                }
            }
        }

        /// The names at `level` whose folded form is `folded`, sorted.
        mutating func matches(
            _ folded: String, at level: String, children: [String: SettingNode]?
        ) -> [String] {
            if levels[level] == nil {
                var index: [String: [String]] = [:]
                for name in Set(children?.keys.map { $0 } ?? []).union(declared[level] ?? []) {
                    index[KeyIdentity.folded(name), default: []].append(name)
                }
                levels[level] = index.mapValues { $0.sorted() }
            }
            return levels[level]?[folded] ?? []
        }

        /// Records the names of `path` (set by a variable) at their levels.
        mutating func add(_ path: [String]) {
            var level = ""
            for component in path {
                if levels[level] != nil {
                    let folded = KeyIdentity.folded(component)
                    if !(levels[level]?[folded]?.contains(component) ?? false) {
                        levels[level]?[folded, default: []].append(component)
                        levels[level]?[folded]?.sort()
                    }
                }
                level = SettingPath.joined(level, component)
            }
        }
    }

    /// The key path `name` sets: its levels, each matched to the tree's (or a declared) spelling.
    private func keyPath(
        of name: String, in tree: [String: SettingNode], spellings: inout Spellings, environment: String
    ) throws(EnvironmentError) -> [String] {
        let written = try writtenLevels(of: name, environment: environment)
        var path: [String] = []
        var level: [String: SettingNode]? = tree
        var levelText = ""
        for segment in written {
            guard let children = level else {
                // Below a value that is no dictionary.
                let above = (try? SettingPath(components: path).description) ?? path.joined(separator: ".")
                throw EnvironmentError(
                    .typeMismatch,
                    "$\(Sentences.shown(name)) sets a key below '\(Sentences.shown(above))', which is "
                        + "\(SettingTree.node(at: path, in: tree)?.value.typeName.withArticle ?? "a value"), not a dictionary",
                    key: above, environment: environment,
                    hint: "Set \(prefix)\(path.joined(separator: "__")) instead, or unset $\(Sentences.shown(name))")
            }
            let key = try spelling(
                of: segment, among: children, at: (path, levelText), spellings: &spellings, variable: name,
                environment: environment)
            path.append(key)
            levelText = SettingPath.joined(levelText, key)
            switch children[key] {
            case .branch(let next, _)?: level = next
            case .leaf?: level = nil
            case nil: level = [:]
            }
        }
        return path
    }

    /// The levels of the key `name` sets, as written (after the prefix, `__` between levels);
    /// an empty level, one with a dot, too many levels or too long a level is an error.
    private func writtenLevels(of name: String, environment: String) throws(EnvironmentError) -> [String] {
        let written = name.dropFirst(prefix.count).components(separatedBy: "__")
        guard !written.contains(where: { $0.isEmpty || $0.contains(".") }) else {
            throw EnvironmentError(
                .invalidName,
                "$\(Sentences.shown(name)) names no key: after \(prefix), each level is a non-empty name without '.', "
                    + "and '__' separates levels",
                environment: environment,
                hint: "Rename it (for example \(prefix)Database__Port for Database.Port), or unset it")
        }
        guard written.count <= SettingPath.maximumDepth else {
            throw EnvironmentError(
                .invalidKey,
                "$\(Sentences.shown(name)) names no key: it has \(written.count) levels, at most "
                    + "\(SettingPath.maximumDepth) are allowed",
                environment: environment, hint: "Rename or unset it; see Limits in the documentation")
        }
        if let long = written.first(where: { $0.utf8.count > SettingPath.maximumComponentBytes }) {
            throw EnvironmentError(
                .invalidKey,
                "$\(Sentences.shown(name)) names no key: its level '\(Sentences.shown(long))' has "
                    + "\(long.utf8.count) bytes, at most \(SettingPath.maximumComponentBytes) are allowed",
                environment: environment, hint: "Rename or unset it; see Limits in the documentation")
        }
        return written
    }

    /// The key one written level (`segment`) stands for among `children`: the same spelling,
    /// else the one key (in the tree or declared) that matches when case is ignored, else
    /// `segment` itself; two that match are an error.
    ///
    /// - Parameter above: The levels above, as a path and as text.
    private func spelling(
        of segment: String, among children: [String: SettingNode], at above: (path: [String], text: String),
        spellings: inout Spellings, variable name: String, environment: String
    ) throws(EnvironmentError) -> String {
        if children[segment] != nil { return segment }
        let matches = spellings.matches(KeyIdentity.folded(segment), at: above.text, children: children)
        if matches.contains(segment) { return segment }
        guard matches.count <= 1 else {
            throw EnvironmentError(
                .invalidSection,
                "$\(Sentences.shown(name)) matches \(matches.map { "'\(Sentences.shown($0))'" }.joined(separator: " and ")) "
                    + "when case is ignored",
                key: (above.path + [segment]).joined(separator: "."), environment: environment,
                hint:
                    "Spell the key exactly as the file does: \(prefix)\((above.path + [matches[0]]).joined(separator: "__"))"
            )
        }
        return matches.first ?? segment
    }

    /// Whether a variable (its name after the prefix, and its value) has the shape of the
    /// variables Kubernetes sets for a Service's links when the Service's name, in upper case,
    /// is the prefix's (`APP_PORT=tcp://ADDRESS:80` for a Service `app`): such a variable is
    /// not a key. Both the name and the value must have the shape, so `APP_Port=8080` is a key.
    static func isServiceLink(_ name: String, value: String) -> Bool {
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        func isNumber(_ text: Substring) -> Bool { !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } }
        func isProtocol(_ text: Substring) -> Bool { text == "TCP" || text == "UDP" || text == "SCTP" }
        func isAddress(_ text: Substring) -> Bool {
            !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == ":") }
        }
        func isLink(_ text: String) -> Bool {
            // tcp://ADDRESS:PORT (an IPv6 address in brackets)
            guard let scheme = text.firstRange(of: "://") else { return false }
            let kind = text[..<scheme.lowerBound]
            guard isProtocol(Substring(kind.uppercased())), kind == kind.lowercased() else { return false }
            let rest = text[scheme.upperBound...]
            guard let colon = rest.lastIndex(of: ":") else { return false }
            var host = rest[..<colon]  // an IPv6 address without its brackets
            while let first = host.first, first == "[" || first == "]" { host = host.dropFirst() }
            while let last = host.last, last == "[" || last == "]" { host = host.dropLast() }
            return isAddress(host) && isNumber(rest[rest.index(after: colon)...])
        }
        switch parts.count {
        case 1 where parts[0] == "PORT": return isLink(value)
        case 2 where parts[0] == "SERVICE" && parts[1] == "HOST": return isAddress(Substring(value))
        case 2 where parts[0] == "SERVICE" && parts[1] == "PORT": return isNumber(Substring(value))
        case 3... where parts[0] == "SERVICE" && parts[1] == "PORT":
            return isNumber(Substring(value)) && name.allSatisfy { !$0.isLowercase }
        case 3 where parts[0] == "PORT" && isNumber(parts[1]) && isProtocol(parts[2]): return isLink(value)
        case 4 where parts[0] == "PORT" && isNumber(parts[1]) && isProtocol(parts[2]):
            switch parts[3] {
            case "PROTO": return isProtocol(Substring(value.uppercased())) && value == value.lowercased()
            case "PORT": return isNumber(Substring(value))
            case "ADDR": return isAddress(Substring(value))
            default: return false
            }
        default: return false
        }
    }

    /// `text` as a value of the type `existing` holds.
    private func typed(
        _ text: String, like existing: SettingNode?, key: String, variable: String, environment: String, isSecret: Bool
    ) throws(EnvironmentError) -> SettingValue {
        let literal = text.replacingEvery("${", with: "$${")
        guard let existing else { return .string(literal) }
        let value: SettingValue?
        switch existing.value {
        case .string: value = .string(literal)
        case .integer: value = Int(text.trimmingWhitespace()).map(SettingValue.integer)
        case .real: value = Double(text.trimmingWhitespace()).map(SettingValue.real)
        case .bool:
            switch text.trimmingWhitespace().lowercased() {
            case "true", "yes", "1": value = .bool(true)
            case "false", "no", "0": value = .bool(false)
            default: value = nil
            }
        case .date: value = (try? Date(text, strategy: .iso8601)).map(SettingValue.date)
        case .data: value = Data(base64Encoded: text).map(SettingValue.data)
        case .array, .dictionary:
            let kind = existing.value.typeName
            throw EnvironmentError(
                .typeMismatch,
                "$\(Sentences.shown(variable)) would replace \(kind.withArticle) ('\(Sentences.shown(key))', set by \(existing.source)); "
                    + "a variable sets one value",
                key: key, environment: environment,
                hint: kind == "dictionary"
                    ? "Set its keys one by one (\(prefix)\(key.replacingEvery(".", with: "__"))__NAME), or unset $\(Sentences.shown(variable))"
                    : "Set the array in a drop-in (envctl set), or unset $\(Sentences.shown(variable))")
        }
        guard let value else {
            // The value is not quoted when the key is secret.
            let shown = isSecret ? "" : " '\(Sentences.shown(text))'"
            throw EnvironmentError(
                .typeMismatch,
                "$\(Sentences.shown(variable))\(shown) is no \(existing.value.typeName) as '\(Sentences.shown(key))' is "
                    + "(set by \(existing.source))",
                key: key, environment: environment,
                hint:
                    "Fix $\(Sentences.shown(variable)) where it is set (a unit's Environment= line: systemctl show -p Environment UNIT), or unset it"
            )
        }
        return value
    }
}
