/// One `Environments.plist` or drop-in, split into its sections.
///
/// Top-level keys: `Common` (inherited by every environment), one dictionary per environment,
/// `Instances` (one dictionary per instance, layered above the environment's section), and
/// two reserved arrays of key paths: `Secrets` and `RestartRequired`.
package struct EnvironmentsFile: Sendable {
    /// Reserved top-level keys that are not environments.
    package static let reservedKeys: Set<String> = ["Common", "Instances", "Secrets", "RestartRequired"]

    let file: String
    let isDropIn: Bool
    let common: [String: SettingValue]
    let environments: [String: [String: SettingValue]]
    let instances: [String: [String: SettingValue]]
    let secrets: [String]
    let restartRequired: [String]

    init(_ document: PropertyListDocument, isDropIn: Bool) throws(EnvironmentError) {
        file = document.file
        self.isDropIn = isDropIn
        let what = isDropIn ? "drop-in" : "file"
        var common: [String: SettingValue] = [:]
        var environments: [String: [String: SettingValue]] = [:]
        var instances: [String: [String: SettingValue]] = [:]
        var secrets: [String] = []
        var restartRequired: [String] = []
        for (key, value) in document.root {
            switch key {
            case "Common":
                guard case .dictionary(let values) = value else {
                    throw EnvironmentsFile.sectionError(key, value, document, what, expected: "a dictionary (<dict>)")
                }
                common = values
            case "Instances":
                guard case .dictionary(let entries) = value else {
                    throw EnvironmentsFile.sectionError(
                        key, value, document, what, expected: "a dictionary of instance names (<dict>)")
                }
                for (instance, settings) in entries {
                    guard case .dictionary(let values) = settings else {
                        throw EnvironmentError(
                            isDropIn ? .invalidDropIn : .invalidSection,
                            "instance '\(instance)' in Instances is \(settings.typeName.withArticle), expected a dictionary (<dict>) of settings",
                            key: "Instances.\(instance)", file: document.file, line: document.line(ofKey: instance),
                            hint:
                                "Each entry of Instances is named after an instance and holds the settings it overrides"
                        )
                    }
                    instances[instance] = values
                }
            case "Secrets", "RestartRequired":
                guard case .array(let items) = value else {
                    throw EnvironmentsFile.sectionError(key, value, document, what, expected: "an array of key names")
                }
                var names: [String] = []
                for item in items {
                    guard case .string(let name) = item else {
                        throw EnvironmentsFile.sectionError(
                            key, item, document, what, expected: "an array of key names (strings)")
                    }
                    names.append(name)
                }
                if key == "Secrets" { secrets = names } else { restartRequired = names }
            default:
                guard case .dictionary(let values) = value else {
                    throw EnvironmentError(
                        isDropIn ? .invalidDropIn : .invalidSection,
                        "environment section '\(key)' is \(value.typeName.withArticle), expected a dictionary (<dict>)",
                        key: key, file: document.file, line: document.line(ofKey: key),
                        hint:
                            "Top-level keys are `Common`, `Instances`, `Secrets`, `RestartRequired` and one dictionary per environment"
                    )
                }
                environments[key] = values
            }
        }
        self.common = common
        self.environments = environments
        self.instances = instances
        self.secrets = secrets
        self.restartRequired = restartRequired
    }

    /// A file built from an in-memory `Environments.plist`-shaped dictionary.
    init(root: [String: SettingValue], label: String) throws(EnvironmentError) {
        try self.init(PropertyListDocument(root: root, file: label), isDropIn: false)
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
