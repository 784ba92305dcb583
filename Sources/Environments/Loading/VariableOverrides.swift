import Foundation

/// Settings from the process environment: with the prefix `APP_`, `APP_Database__Port=6432`
/// sets `Database.Port` (`__` for each level of nesting), as .NET's configuration and
/// pydantic-settings read them.
///
/// The layer sits above the files and below runtime overrides. Its rules:
/// - A variable names a key by its spelling; a level that no file or default spells that way
///   is matched ignoring case (`APP_DATABASE__PORT` sets `Database.Port`), and two keys that
///   differ only in case make that an error. A key no layer below has is added as a string.
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

    init(prefix: String, options: EnvironmentOptions) {
        self.prefix = prefix
        self.excluded = [options.environmentVariable, options.instanceVariable]
        self.variables = options.processEnvironment
    }

    /// The variables that set keys, in name order (byte by byte), so that errors come in the
    /// same order on every run.
    var names: [String] {
        variables.keys
            .filter { $0.hasPrefix(prefix) && !excluded.contains($0) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// Applies every variable to `tree`, the merged files and defaults before interpolation.
    ///
    /// - Parameter secretPaths: The secret keys: a value that does not parse is not quoted for them.
    func apply(to tree: inout [String: SettingNode], environment: String, secretPaths: Set<String>)
        throws(EnvironmentError)
    {
        var setBy: [String: String] = [:]  // key path -> variable, to report two that meet
        for name in names {
            guard let text = variables[name] else { continue }
            let path = try keyPath(of: name, in: tree, environment: environment)
            let key = path.joined(separator: ".")
            if let other = setBy[key] {
                throw EnvironmentError(
                    .invalidSection, "$\(other) and $\(name) both set '\(Interpolator.shown(key))'",
                    key: key, environment: environment, hint: "Unset one of them")
            }
            setBy[key] = name
            let existing = SettingTree.node(at: path, in: tree)
            let value = try typed(
                text, like: existing, key: key, variable: name, environment: environment,
                isSecret: Interpolator.isSecret(key, in: secretPaths))
            let source = ValueSource(layer: .environmentVariable, section: name)
            SettingTree.setNode(.leaf(ConfiguredValue(value: value, source: source)), at: path, in: &tree)
        }
    }

    /// The key path `name` sets: its levels, each matched to the tree's spelling.
    private func keyPath(of name: String, in tree: [String: SettingNode], environment: String)
        throws(EnvironmentError) -> [String]
    {
        let written = name.dropFirst(prefix.count).components(separatedBy: "__")
        guard !written.contains(where: { $0.isEmpty || $0.contains(".") }) else {
            throw EnvironmentError(
                .invalidName,
                "$\(Interpolator.shown(name)) names no key: after \(prefix), each level is a non-empty name without '.', "
                    + "and '__' separates levels",
                environment: environment,
                hint: "Rename it (for example \(prefix)Database__Port for Database.Port), or unset it")
        }
        var path: [String] = []
        var level: [String: SettingNode]? = tree
        for segment in written {
            guard let children = level else {
                // Below a value that is no dictionary.
                let above = path.joined(separator: ".")
                throw EnvironmentError(
                    .typeMismatch,
                    "$\(name) sets a key below '\(Interpolator.shown(above))', which is "
                        + "\(SettingTree.node(at: path, in: tree)?.value.typeName.withArticle ?? "a value"), not a dictionary",
                    key: above, environment: environment,
                    hint: "Set \(prefix)\(path.joined(separator: "__")) instead, or unset $\(name)")
            }
            let key: String
            if children[segment] != nil {
                key = segment
            } else {
                let matches = children.keys.filter { $0.caseInsensitiveCompare(segment) == .orderedSame }.sorted()
                guard matches.count <= 1 else {
                    throw EnvironmentError(
                        .invalidSection,
                        "$\(name) matches \(matches.map { "'\(Interpolator.shown(($0 as String)))'" }.joined(separator: " and ")) "
                            + "when case is ignored",
                        key: (path + [segment]).joined(separator: "."), environment: environment,
                        hint:
                            "Spell the key exactly as the file does: \(prefix)\((path + [matches[0]]).joined(separator: "__"))"
                    )
                }
                key = matches.first ?? segment
            }
            path.append(key)
            switch children[key] {
            case .branch(let next, _)?: level = next
            case .leaf?: level = nil
            case nil: level = [:]
            }
        }
        return path
    }

    /// `text` as a value of the type `existing` holds.
    private func typed(
        _ text: String, like existing: SettingNode?, key: String, variable: String, environment: String, isSecret: Bool
    ) throws(EnvironmentError) -> SettingValue {
        let literal = text.replacingOccurrences(of: "${", with: "$${")
        guard let existing else { return .string(literal) }
        let value: SettingValue?
        switch existing.value {
        case .string: value = .string(literal)
        case .integer: value = Int(text.trimmingCharacters(in: .whitespaces)).map(SettingValue.integer)
        case .double: value = Double(text.trimmingCharacters(in: .whitespaces)).map(SettingValue.double)
        case .bool:
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "1": value = .bool(true)
            case "false", "no", "0": value = .bool(false)
            default: value = nil
            }
        case .date: value = ISO8601DateFormatter().date(from: text).map(SettingValue.date)
        case .data: value = Data(base64Encoded: text).map(SettingValue.data)
        case .array, .dictionary:
            let kind = existing.value.typeName
            throw EnvironmentError(
                .typeMismatch,
                "$\(variable) would replace \(kind.withArticle) ('\(Interpolator.shown(key))', set by \(existing.source)); "
                    + "a variable sets one value",
                key: key, environment: environment,
                hint: kind == "dictionary"
                    ? "Set its keys one by one (\(prefix)\(key.replacingOccurrences(of: ".", with: "__"))__NAME), or unset $\(variable)"
                    : "Set the array in a drop-in (envctl set), or unset $\(variable)")
        }
        guard let value else {
            // The value is not quoted when the key is secret.
            let shown = isSecret ? "" : " '\(Interpolator.shown(text))'"
            throw EnvironmentError(
                .typeMismatch,
                "$\(variable)\(shown) is no \(existing.value.typeName) as '\(Interpolator.shown(key))' is "
                    + "(set by \(existing.source))",
                key: key, environment: environment,
                hint:
                    "Fix $\(variable) where it is set (a unit's Environment= line: systemctl show -p Environment UNIT), or unset it"
            )
        }
        return value
    }
}
