/// One `Environments.plist` or drop-in, split into its sections.
///
/// Top-level keys: `Common` (inherited by every environment), one dictionary per environment,
/// `Instances` (one dictionary per instance, layered above the environment's section), and
/// two reserved arrays of key paths: `Secrets` and `RestartRequired`.
package struct EnvironmentsFile: Sendable {
    /// Reserved top-level keys that are not environments.
    package static let reservedKeys: Set<String> = [
        "Common", "Instances", "Secrets", "RestartRequired",
    ]

    let file: String
    let isDropIn: Bool
    let common: [String: SettingValue]
    let environments: [String: [String: SettingValue]]
    let instances: [String: [String: SettingValue]]
    let secrets: [String]
    let restartRequired: [String]
    /// What loads but should be fixed: keys written twice in one dictionary.
    let warnings: [ConfigurationWarning]
    /// The document read, for the lines of keys reported later.
    let document: PropertyListDocument

    init(_ document: PropertyListDocument, isDropIn: Bool) throws(EnvironmentError) {
        file = document.file
        self.document = document
        warnings = Self.duplicateKeyWarnings(document)
        self.isDropIn = isDropIn
        let what = isDropIn ? "drop-in" : "file"
        var common: [String: SettingValue] = [:]
        var environments: [String: [String: SettingValue]] = [:]
        var instances: [String: [String: SettingValue]] = [:]
        var secrets: [String] = []
        var restartRequired: [String] = []
        var pathBytes = 0
        // In key order, so that of two errors the same one is reported on every run.
        for (key, value) in document.root.sorted(by: { $0.key < $1.key }) {
            switch key {
            case "Common":
                guard case .dictionary(let values) = value else {
                    throw EnvironmentsFile.sectionError(key, value, document, what, expected: "a dictionary (<dict>)")
                }
                common = try EnvironmentsFile.expanding(
                    values, section: ["Common"], document, isDropIn: isDropIn, pathBytes: &pathBytes)
            case "Instances":
                instances = try EnvironmentsFile.instanceSections(
                    value, document, isDropIn: isDropIn, pathBytes: &pathBytes)
            case "Secrets", "RestartRequired":
                let names = try EnvironmentsFile.keyPaths(listedIn: key, value, document, what)
                if key == "Secrets" { secrets = names } else { restartRequired = names }
            default:
                environments[key] = try EnvironmentsFile.environmentSection(
                    key, value, document, isDropIn: isDropIn, pathBytes: &pathBytes)
            }
        }
        self.common = common
        self.environments = environments
        self.instances = instances
        self.secrets = secrets
        self.restartRequired = restartRequired
    }

    /// The `Instances` dictionary: each instance's settings, their keys taken as paths.
    private static func instanceSections(
        _ value: SettingValue, _ document: PropertyListDocument, isDropIn: Bool, pathBytes: inout Int
    ) throws(EnvironmentError) -> [String: [String: SettingValue]] {
        guard case .dictionary(let entries) = value else {
            throw EnvironmentsFile.sectionError(
                "Instances", value, document, isDropIn ? "drop-in" : "file",
                expected: "a dictionary of instance names (<dict>)")
        }
        var instances: [String: [String: SettingValue]] = [:]
        for (instance, settings) in entries.sorted(by: { $0.key < $1.key }) {
            guard case .dictionary(let values) = settings else {
                throw EnvironmentError(
                    isDropIn ? .invalidDropIn : .invalidSection,
                    "instance '\(instance)' in Instances is \(settings.typeName.withArticle), expected a dictionary (<dict>) of settings",
                    key: "Instances.\(instance)", file: document.file, line: document.line(ofKey: instance),
                    hint: "Each entry of Instances is named after an instance and holds the settings it overrides"
                )
            }
            instances[instance] = try EnvironmentsFile.expanding(
                values, section: ["Instances", instance], document, isDropIn: isDropIn, pathBytes: &pathBytes)
        }
        return instances
    }

    /// The key paths of `Secrets` or `RestartRequired` (`key`), in their canonical text.
    private static func keyPaths(
        listedIn key: String, _ value: SettingValue, _ document: PropertyListDocument, _ what: String
    ) throws(EnvironmentError) -> [String] {
        guard case .array(let items) = value else {
            throw EnvironmentsFile.sectionError(key, value, document, what, expected: "an array of key names")
        }
        var names: [String] = []
        for item in items {
            guard case .string(let name) = item else {
                throw EnvironmentsFile.sectionError(
                    key, item, document, what, expected: "an array of key names (strings)")
            }
            do {
                names.append(try SettingPath(parsing: name).description)
            } catch {
                var error = error
                error.message = "in \(key) in this \(what): " + error.message
                error.file = document.file
                error.line = document.line(ofKey: key)
                throw error
            }
        }
        return names
    }

    /// An environment's section (any other top-level key), its keys taken as paths.
    private static func environmentSection(
        _ key: String, _ value: SettingValue, _ document: PropertyListDocument, isDropIn: Bool, pathBytes: inout Int
    ) throws(EnvironmentError) -> [String: SettingValue] {
        guard case .dictionary(let values) = value else {
            throw EnvironmentError(
                isDropIn ? .invalidDropIn : .invalidSection,
                "environment section '\(key)' is \(value.typeName.withArticle), expected a dictionary (<dict>)",
                key: key, file: document.file, line: document.line(ofKey: key),
                hint:
                    "Top-level keys are `Common`, `Instances`, `Secrets`, `RestartRequired` and one dictionary per environment"
            )
        }
        return try EnvironmentsFile.expanding(
            values, section: [key], document, isDropIn: isDropIn, pathBytes: &pathBytes)
    }

    /// A file built from an in-memory `Environments.plist`-shaped dictionary.
    init(root: [String: SettingValue], label: String) throws(EnvironmentError) {
        try self.init(PropertyListDocument(root: root, file: label), isDropIn: false)
    }

    /// A section with its top-level keys taken as paths (``SectionKeys``); a path set twice in
    /// it, or a key that is no valid path, is an error naming the key and its line.
    private static func expanding(
        _ values: [String: SettingValue], section: [String], _ document: PropertyListDocument, isDropIn: Bool,
        pathBytes: inout Int
    ) throws(EnvironmentError) -> [String: SettingValue] {
        let name =
            switch section.first {
            case "Common": "Common"
            case "Instances": "the instance '\(Sentences.shown(section.last ?? ""))' in Instances"
            default: "the environment '\(Sentences.shown(section.first ?? ""))'"
            }
        let place = name + " in this \(isDropIn ? "drop-in" : "file")"
        let code: EnvironmentError.Code = isDropIn ? .invalidDropIn : .invalidSection
        do {
            return try SectionKeys.expand(values, totalPathBytes: &pathBytes) { first, second, path in
                SettingTree.conflictError(
                    first, second, path: path, in: place, code: code, file: document.file,
                    lines: (document.line(ofKeyPath: section + first), document.line(ofKeyPath: section + second)))
            }
        } catch {
            var failure = error.error
            if failure.code == .invalidKey {
                failure.message = "in \(place): " + failure.message
            }
            failure.file = failure.file ?? document.file
            failure.line = failure.line ?? document.line(ofKeyPath: section + error.written)
            throw failure
        }
    }

    /// A warning for each key the document writes twice in one dictionary (the last copy is
    /// used, as every property-list reader does), and one for those past the parser's list.
    private static func duplicateKeyWarnings(_ document: PropertyListDocument) -> [ConfigurationWarning] {
        var warnings: [ConfigurationWarning] = []
        for duplicate in document.duplicateKeys {
            // The key path in the configuration: below the section (an instance's is two deep).
            let inSection =
                duplicate.path.first == "Instances" ? duplicate.path.dropFirst(2) : duplicate.path.dropFirst()
            var key = ""
            for component in inSection + [duplicate.key] where !component.hasPrefix("[") {
                key = SettingPath.joined(key, component)
            }
            let place = (duplicate.path + [duplicate.key]).map { "'\(Sentences.shown($0))'" }.joined(
                separator: " > ")
            let lines =
                if let first = duplicate.firstLine, let line = duplicate.line {
                    " on line \(first) and again on line \(line)"
                } else { "" }
            // Copies that look the same but are spelled with other code points: say so, or the
            // warning would name a key that seems written once.
            let forms =
                if let first = duplicate.firstSpelling {
                    " (as \(Self.codePoints(first)) and as \(Self.codePoints(duplicate.key)): one key in two Unicode forms)"
                } else { "" }
            warnings.append(
                ConfigurationWarning(
                    .duplicateKey,
                    "\(place) is written twice in one dictionary\(lines)\(forms); the last copy is used",
                    key: duplicate.path.isEmpty ? nil : key, file: document.file, line: duplicate.line,
                    hint: "Remove the copy that is not meant (property-list readers keep the last one)"))
        }
        if document.unlistedDuplicateKeyCount > 0 {
            warnings.append(
                ConfigurationWarning(
                    .duplicateKey,
                    "\(document.unlistedDuplicateKeyCount) more keys are written twice in one dictionary (not listed)",
                    file: document.file))
        }
        return warnings
    }

    /// `key`'s code points, `U+0065 U+0301`, for a message about spellings that look alike.
    private static func codePoints(_ key: String) -> String {
        let scalars = key.unicodeScalars.prefix(16).map { scalar in
            let hex = String(scalar.value, radix: 16, uppercase: true)
            return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
        return scalars.joined(separator: " ") + (key.unicodeScalars.count > 16 ? " ..." : "")
    }

    private static func sectionError(
        _ key: String, _ value: SettingValue, _ document: PropertyListDocument, _ what: String, expected: String
    ) -> EnvironmentError {
        EnvironmentError(
            what == "drop-in" ? .invalidDropIn : .invalidSection,
            "'\(key)' in this \(what) is \(value.typeName.withArticle), expected \(expected)", key: key,
            file: document.file,
            line: document.line(ofKey: key))
    }
}
