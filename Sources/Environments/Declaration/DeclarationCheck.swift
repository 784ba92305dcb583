import TextEscaping

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The check of a configuration against a ``SettingsDeclaration``, at every load.
///
/// Costs grow with the number of declared keys plus the number of configured keys: each
/// declared key is looked up in the tree, and the tree is walked once beside the declared
/// keys' levels. Suggestions ("did you mean") and line numbers are looked for only for the
/// keys reported, and only for the first ``detailedLimit`` of each kind.
struct DeclarationCheck {
    let declaration: SettingsDeclaration
    let environmentName: String
    /// The files the configuration was read from, for line numbers.
    let documents: [String: PropertyListDocument]
    /// Secret paths, folded (``Interpolator/folded(_:)``).
    let foldedSecrets: Set<String>

    /// Problems listed in full in the load's error; more are counted.
    static let errorLimit = 20
    /// Warnings of one kind listed one by one; more are counted in one warning.
    static let detailedLimit = 50
    /// At most this many declared names at a level are compared with an unknown name.
    static let suggestionCandidates = 5000

    init(
        declaration: SettingsDeclaration, environmentName: String, files: [EnvironmentsFile], secrets: Set<String>
    ) {
        self.declaration = declaration
        self.environmentName = environmentName
        var documents: [String: PropertyListDocument] = [:]
        for file in files { documents[file.file] = file.document }
        self.documents = documents
        self.foldedSecrets = Interpolator.folded(secrets)
    }

    // MARK: Former names

    /// Moves each value set under a former name to the key it is now (unless that key is set
    /// above the defaults too, which then wins), with a warning for each.
    func applyFormerNames(to tree: inout [String: SettingNode]) -> [ConfigurationWarning] {
        var warnings: [ConfigurationWarning] = []
        for (former, key) in declaration.formerNames.sorted(by: { $0.key < $1.key }) {
            guard let formerPath = try? SettingPath(parsing: former).components,
                let node = SettingTree.node(at: formerPath, in: tree),
                let path = try? SettingPath(parsing: key).components
            else { continue }
            let current = SettingTree.node(at: path, in: tree)
            let (file, line) = location(of: formerPath, in: node)
            if current == nil || current?.source.layer == .defaults {
                SettingTree.setNode(node, at: path, in: &tree)
                warnings.append(
                    ConfigurationWarning(
                        .formerName,
                        "'\(Sentences.shown(former))' is the former name of '\(Sentences.shown(key))'; its value is used for '\(Sentences.shown(key))'",
                        key: former, file: file, line: line,
                        hint: "Rename it to '\(Sentences.shown(key))'"))
            } else {
                warnings.append(
                    ConfigurationWarning(
                        .formerName,
                        "'\(Sentences.shown(former))' is the former name of '\(Sentences.shown(key))', which is set too; '\(Sentences.shown(former))' is ignored",
                        key: former, file: file, line: line, hint: "Remove '\(Sentences.shown(former))'"))
            }
            Self.remove(formerPath[...], from: &tree)
        }
        return warnings
    }

    /// Removes the node at a path, and the dictionaries it leaves empty.
    private static func remove(_ path: ArraySlice<String>, from tree: inout [String: SettingNode]) {
        guard let first = path.first else { return }
        if path.count == 1 {
            tree[first] = nil
            return
        }
        guard case .branch(var children, let source)? = tree.removeValue(forKey: first) else { return }
        remove(path.dropFirst(), from: &children)
        if !children.isEmpty { tree[first] = .branch(children, source) }
    }

    // MARK: Values

    /// Every declared key's problem: a value of the wrong type or out of bounds, or none where
    /// one is required. Empty when all is well.
    func problems(in tree: [String: SettingNode]) -> [EnvironmentError] {
        var problems: [EnvironmentError] = []
        for mistake in declaration.mistakes {
            problems.append(
                EnvironmentError(
                    .validationFailed, "the settings declaration is wrong: \(mistake)",
                    hint: "Fix the program's SettingsDeclaration"))
        }
        var patterns: [String: Regex<AnyRegexOutput>?] = [:]
        let settings = declaration.settings
        // By index: a `for in` loop would copy each declaration (a dozen references) to read it.
        for index in settings.indices {
            let path = settings[index].components
            guard let node = SettingTree.node(at: path, in: tree) else {
                if let problem = requirementProblem(settings[index], onlyDefault: false) { problems.append(problem) }
                continue
            }
            if node.source.layer == .defaults,
                let problem = requirementProblem(settings[index], onlyDefault: true)
            {
                problems.append(problem)
                continue
            }
            // The common case, a string where an unbounded string is declared: nothing to check.
            if settings[index].isPlainString, case .string = node.value { continue }
            let setting = settings[index]
            let value = node.value
            guard var problem = check(value, type: setting.type, bounds: setting.bounds, patterns: &patterns) else {
                if let accepts = setting.accepts, !accepts(value) {
                    problems.append(error(for: setting, node: node, path: path, "is not a valid \(setting.type)"))
                }
                continue
            }
            let secret =
                node.containsSecret || setting.isSecret || Interpolator.isSecret(setting.key, in: foldedSecrets)
            problem = Self.unmarking(problem, showingValues: !secret)
            problems.append(error(for: setting, node: node, path: path, problem))
        }
        return problems
    }

    /// The problem of a setting set by no layer but the defaults, if it is required here.
    private func requirementProblem(_ setting: SettingDeclaration, onlyDefault: Bool) -> EnvironmentError? {
        guard setting.requirement.applies(in: environmentName) else { return nil }
        return EnvironmentError(
            .validationFailed,
            "'\(Sentences.shown(setting.key))' is required\(where_(setting.requirement)) and "
                + (onlyDefault ? "only has its default" : "has no value"),
            key: setting.key, environment: environmentName,
            hint: "Set it in Common or in the '\(environmentName)' section")
    }

    /// `text` without the value markers, and without the quoted values unless `showingValues`.
    private static func unmarking(_ text: String, showingValues: Bool) -> String {
        let parts = text.split(separator: Character(valueMarker), omittingEmptySubsequences: false)
        return parts.enumerated().filter { showingValues || $0.offset % 2 == 0 }.map(\.element).joined()
    }

    private func where_(_ requirement: SettingRequirement) -> String {
        guard let environments = requirement.environments else { return "" }
        return " in \(environments.sorted().joined(separator: ", "))"
    }

    private func error(for setting: SettingDeclaration, node: SettingNode, path: [String], _ problem: String)
        -> EnvironmentError
    {
        let (file, line) = location(of: path, in: node)
        return EnvironmentError(
            .validationFailed, "'\(Sentences.shown(setting.key))' \(problem)", key: setting.key,
            environment: environmentName, file: file, line: line,
            hint: setting.summary.isEmpty ? nil : "'\(Sentences.shown(setting.key))': \(setting.summary)")
    }

    /// Marks where a message quotes a value: taken out, with the quote, for a secret value.
    private static let valueMarker = "\u{1}"

    /// What is wrong with `value` for `type` and `bounds`: `nil` when nothing is.
    private func check(
        _ value: SettingValue, type: SettingType, bounds: SettingBounds,
        patterns: inout [String: Regex<AnyRegexOutput>?]
    ) -> String? {
        switch type {
        case .array(let element):
            guard case .array(let elements) = value else { return wrongType(value, type) }
            for (index, item) in elements.enumerated() {
                if let problem = check(item, type: element, bounds: bounds, patterns: &patterns) {
                    return "has element [\(index)] that " + problem
                }
            }
            return nil
        case .map(let element):
            guard case .dictionary(let entries) = value else { return wrongType(value, type) }
            for (key, item) in entries.sorted(by: { $0.key < $1.key }) {
                if let problem = check(item, type: element, bounds: bounds, patterns: &patterns) {
                    return "has '\(Sentences.shown(key))' that " + problem
                }
            }
            return nil
        default:
            guard let normalized = Self.normalized(value, type) else { return wrongType(value, type) }
            return outOfBounds(value, normalized, type, bounds, patterns: &patterns)
        }
    }

    private func wrongType(_ value: SettingValue, _ type: SettingType) -> String {
        "is \(value.typeName.withArticle)\(quoted(value)), expected \(type.withArticleIfScalar)"
    }

    /// ` ('text')`, marked so a secret's is taken out.
    private func quoted(_ value: SettingValue) -> String {
        switch value {
        case .array, .dictionary, .data: return ""
        default:
            var text = value.description
            if text.count > 80 { text = String(text.prefix(77)) + "..." }
            return Self.valueMarker + " ('\(ControlCharacters.escaped(text))')" + Self.valueMarker
        }
    }

    /// The value converted as a typed read converts it, in a form to compare: numbers and
    /// durations (in seconds) as reals, URLs as strings. `nil` if it does not convert.
    static func normalized(_ value: SettingValue, _ type: SettingType) -> SettingValue? {
        switch type {
        case .string: String(settingValue: value).map(SettingValue.string)
        case .integer: Int(settingValue: value).map(SettingValue.integer)
        case .real: Double(settingValue: value).map(SettingValue.real)
        case .boolean: Bool(settingValue: value).map(SettingValue.bool)
        case .url: URL(settingValue: value).map { .string($0.absoluteString) }
        case .duration: Duration(settingValue: value).map { .real($0.inSeconds) }
        case .date: Date(settingValue: value).map(SettingValue.date)
        case .data: Data(settingValue: value).map(SettingValue.data)
        case .section:
            if case .dictionary = value { value } else { nil }
        case .any, .custom, .array, .map: value
        }
    }

    private func outOfBounds(
        _ value: SettingValue, _ normalized: SettingValue, _ type: SettingType, _ bounds: SettingBounds,
        patterns: inout [String: Regex<AnyRegexOutput>?]
    ) -> String? {
        if bounds.minimum != nil || bounds.maximum != nil {
            let number: Double? =
                switch normalized {
                case .integer(let integer): Double(integer)
                case .real(let real): real
                default: nil
                }
            if let number, number < (bounds.minimum ?? -.infinity) || number > (bounds.maximum ?? .infinity) {
                let range =
                    bounds.rangeDescription ?? "\(bounds.minimum ?? -.infinity)...\(bounds.maximum ?? .infinity)"
                return "is out of range\(quoted(value)), expected \(range)"
            }
        }
        if !bounds.allowedValues.isEmpty {
            let allowed = bounds.allowedValues.compactMap { Self.normalized($0, type) }
            if !allowed.contains(normalized) {
                let list = bounds.allowedValues.map { "'\($0)'" }.joined(separator: ", ")
                return "is not an allowed value\(quoted(value)), expected one of \(list)"
            }
        }
        if let pattern = bounds.pattern, case .string(let text) = normalized {
            if patterns[pattern] == nil {
                // Unicode scalar semantics, as ICU's (NSRegularExpression's) code points: `.`
                // matches one scalar, not a whole character.
                patterns[pattern] = .some((try? Regex(pattern))?.matchingSemantics(.unicodeScalar))
            }
            guard let expression = patterns[pattern] ?? nil else {
                return "cannot be checked: the declared pattern '\(pattern)' is not a valid regular expression"
            }
            if (try? expression.wholeMatch(in: text)) == nil {
                return "does not match the pattern '\(pattern)'\(quoted(value))"
            }
        }
        if !bounds.urlSchemes.isEmpty, case .string(let text) = normalized {
            let scheme = URL(string: text)?.scheme?.lowercased() ?? ""
            if !bounds.urlSchemes.contains(where: { $0.lowercased() == scheme }) {
                // The scheme is part of the value: taken out with it when the value is secret.
                let schemes = bounds.urlSchemes.joined(separator: " or ")
                var shown = text
                if shown.count > 80 { shown = String(shown.prefix(77)) + "..." }
                return "is not a URL with the scheme \(schemes)" + Self.valueMarker
                    + " ('\(ControlCharacters.escaped(shown))', scheme '\(ControlCharacters.escaped(scheme))')"
                    + Self.valueMarker
            }
        }
        return nil
    }

    // MARK: Unknown keys

    /// A warning for each key set in a file that no declaration covers, with a suggestion
    /// where a declared key is spelled nearly the same.
    func unknownKeys(in tree: [String: SettingNode]) -> [ConfigurationWarning] {
        var unknown: [(path: [String], source: ValueSource, level: DeclaredLevel)] = []
        walk(tree, level: declaration.root, path: [], into: &unknown)
        unknown.sort { SettingPath.text(of: $0.path) < SettingPath.text(of: $1.path) }
        var warnings: [ConfigurationWarning] = []
        for (path, source, level) in unknown.prefix(Self.detailedLimit) {
            let key = SettingPath.text(of: path)
            let parent = path.dropLast()
            let suggestion = Self.suggestion(for: path.last ?? "", among: level).map {
                SettingPath.text(of: parent + [$0])
            }
            let (file, line) = location(of: path, source: source)
            let inSection = source.section.map { " (in \($0))" } ?? ""
            warnings.append(
                ConfigurationWarning(
                    .unknownKey,
                    "'\(Sentences.shown(key))'\(inSection) is not a declared setting, so nothing reads it"
                        + (suggestion.map { "; did you mean '\(Sentences.shown($0))'?" } ?? ""),
                    key: key, file: file, line: line,
                    hint: suggestion.map { "Rename it to '\(Sentences.shown($0))'" }
                        ?? "Remove it, or declare it in the program"))
        }
        if unknown.count > Self.detailedLimit {
            warnings.append(
                ConfigurationWarning(
                    .unknownKey,
                    "\(unknown.count - Self.detailedLimit) more keys are not declared settings (not listed)"))
        }
        return warnings
    }

    /// Collects the nodes no declared key covers that a file set (the topmost of each subtree).
    private func walk(
        _ nodes: [String: SettingNode], level: DeclaredLevel, path: [String],
        into unknown: inout [(path: [String], source: ValueSource, level: DeclaredLevel)]
    ) {
        for (name, node) in nodes {
            if let child = level.children[name] {
                if child.isDeclared { continue }
                if case .branch(let children, _) = node {
                    walk(children, level: child, path: path + [name], into: &unknown)
                }
                continue
            }
            if let source = Self.fileSource(node) { unknown.append((path + [name], source, level)) }
        }
    }

    /// The source of the first value below `node` that a file set, if any.
    private static func fileSource(_ node: SettingNode) -> ValueSource? {
        switch node {
        case .leaf(let configured):
            switch configured.source.layer {
            case .common, .environment, .instance: return configured.source
            default: return nil
            }
        case .branch(let children, _):
            for child in children.values {
                if let source = fileSource(child) { return source }
            }
            return nil
        }
    }

    // MARK: Variables

    /// A warning for each environment variable that set a key no declaration covers.
    func unmatchedVariables(_ applied: [(variable: String, path: [String])], prefix: String)
        -> [ConfigurationWarning]
    {
        var warnings: [ConfigurationWarning] = []
        var count = 0
        for (variable, path) in applied {
            var level = declaration.root
            var matched: [String] = []
            var covered = false
            for component in path {
                guard let child = level.children[component] else { break }
                matched.append(component)
                level = child
                if child.isDeclared {
                    covered = true
                    break
                }
            }
            if covered { continue }
            count += 1
            guard count <= Self.detailedLimit else { continue }
            let missing = path.count > matched.count ? path[matched.count] : ""
            let suggestion = Self.suggestion(for: missing, among: level).map { matched + [$0] }
            let suggested = suggestion.map { prefix + $0.joined(separator: "__") }
            let key = SettingPath.text(of: path)
            warnings.append(
                ConfigurationWarning(
                    .unmatchedVariable,
                    "$\(Sentences.shown(variable)) sets '\(Sentences.shown(key))', which is not a declared setting"
                        + (suggested.map {
                            "; did you mean $\(Sentences.shown($0)) ('\(Sentences.shown(SettingPath.text(of: suggestion ?? [])))')?"
                        } ?? ""),
                    key: key,
                    hint: suggested.map { "Rename the variable to \($0)" }
                        ?? "Unset it, or declare '\(Sentences.shown(key))' in the program"))
        }
        if count > Self.detailedLimit {
            warnings.append(
                ConfigurationWarning(
                    .unmatchedVariable,
                    "\(count - Self.detailedLimit) more environment variables set keys that are not declared settings (not listed)"
                ))
        }
        return warnings
    }

    // MARK: Misspelt sections

    /// A warning for each top-level section of a file that is spelled nearly like `Common`,
    /// `Instances`, `Secrets`, `RestartRequired`, or (for a drop-in) an environment that a
    /// main file defines: it is taken as an environment of its own, which is rarely meant.
    static func misspeltSections(in files: [EnvironmentsFile]) -> [ConfigurationWarning] {
        let reserved = EnvironmentsFile.reservedKeys.sorted()
        let defined = Set(files.filter { !$0.isDropIn }.flatMap(\.environments.keys))
        var level = DeclaredLevel()
        for name in reserved { level.insert([name]) }
        var mainLevel = level
        for name in defined.prefix(1000) { mainLevel.insert([name]) }
        var warnings: [ConfigurationWarning] = []
        for file in files {
            for name in file.environments.keys.sorted() where !defined.contains(name) || !file.isDropIn {
                let among = file.isDropIn ? mainLevel : level
                guard let suggestion = suggestion(for: name, among: among), suggestion != name else { continue }
                guard warnings.count < detailedLimit else { return warnings }
                warnings.append(
                    ConfigurationWarning(
                        .unknownKey,
                        "the section '\(Sentences.shown(name))' is taken as an environment of its own; did you mean '\(suggestion)'?",
                        key: name, file: file.file == "<built-in configuration>" ? nil : file.file,
                        line: file.document.line(ofKey: name), hint: "Rename it to '\(suggestion)'"))
            }
        }
        return warnings
    }

    // MARK: Helpers

    /// The file and line that set `path` (components) whose node is `node`.
    private func location(of path: [String], in node: SettingNode) -> (String?, Int?) {
        guard let source = Self.fileSource(node) else { return (nil, nil) }
        return location(of: path, source: source)
    }

    private func location(of path: [String], source: ValueSource) -> (String?, Int?) {
        guard let file = source.file else { return (nil, nil) }
        guard let document = documents[file] else { return (file, nil) }
        var section: [String]
        switch source.layer {
        case .common: section = ["Common"]
        case .environment: section = [source.section ?? environmentName]
        case .instance:
            let name = source.section ?? ""
            section = ["Instances", String(name.dropFirst("Instances.".count))]
        default: return (file, nil)
        }
        // Nested dictionaries, else one dotted key, else the key's last name alone.
        let line =
            document.line(ofKeyPath: section + path)
            ?? document.line(ofKeyPath: section + [SettingPath.text(of: path)])
            ?? path.last.flatMap { document.line(ofKeyPath: section + [$0]) }
        return (file, line)
    }

    /// The declared name at `level` closest to `name`: the same ignoring case
    /// (``KeyIdentity/folded(_:)``), else within a
    /// small edit distance (1 for short names, 2 from 5 characters, 3 from 12).
    static func suggestion(for name: String, among level: DeclaredLevel) -> String? {
        let folded = Array(KeyIdentity.folded(name).unicodeScalars)
        let limit = folded.count >= 12 ? 3 : folded.count >= 5 ? 2 : 1
        var best: (name: String, distance: Int)?
        for candidate in level.children.keys.prefix(suggestionCandidates) {
            let other = Array(KeyIdentity.folded(candidate).unicodeScalars)
            guard abs(other.count - folded.count) <= limit else { continue }
            let distance = editDistance(folded, other, limit: limit)
            guard distance <= limit else { continue }
            if best == nil || distance < best!.distance || (distance == best!.distance && candidate < best!.name) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// The edit distance (insertions, deletions, substitutions and swaps of two neighbours:
    /// `Hots` is one from `Host`), or more than `limit` when it is (stops early).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                var cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    cost = min(cost, beforePrevious[j - 2] + 1)
                }
                current[j] = cost
                rowMinimum = min(rowMinimum, cost)
            }
            if rowMinimum > limit { return limit + 1 }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}

extension SettingType {
    /// `an integer`, `a URL`, `an array of string`.
    var withArticleIfScalar: String {
        switch self {
        case .custom: description
        case .url: "a URL"
        default: description.withArticle
        }
    }
}

extension SettingPath {
    /// The text form of components (quoted where needed), without checking bounds.
    static func text<C: Collection<String>>(of components: C) -> String {
        components.reduce("") { SettingPath.joined($0, $1) }
    }
}
