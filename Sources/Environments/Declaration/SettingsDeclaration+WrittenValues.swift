#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SettingsDeclaration {
    /// The problems this declaration finds with the values of the settings that cover `paths`
    /// (key paths a change writes), as they are in `snapshot` (a configuration loaded without
    /// the declaration, with the change): a value of the wrong type, out of bounds, or failing
    /// a rule (allowed values, a pattern, the setting's own check), as a load with the
    /// declaration reports them, secrets redacted.
    ///
    /// Only those settings are checked: a required key that the files do not give (the unit's
    /// environment may) is no problem of a change that does not touch it.
    package func problems(writing paths: [[String]], in snapshot: EnvironmentSnapshot) -> [EnvironmentError] {
        var covered: [String: SettingDeclaration] = [:]
        for path in paths {
            // The setting at the path, or one above it (a map or array setting holds it).
            for length in stride(from: path.count, through: 1, by: -1) {
                guard let key = try? SettingPath(components: Array(path.prefix(length))).description else { continue }
                if let setting = declaration(forKey: key) {
                    covered[setting.key] = setting
                    break
                }
            }
        }
        guard !covered.isEmpty else { return [] }
        var tree: [String: SettingNode] = [:]
        for setting in covered.values {
            guard let node = snapshot.node(at: setting.key) else { continue }
            SettingTree.setNode(node, at: setting.components, in: &tree)
        }
        let present = covered.values.filter { SettingTree.node(at: $0.components, in: tree) != nil }
        let check = DeclarationCheck(
            declaration: SettingsDeclaration(present.sorted { $0.key < $1.key }),
            environmentName: snapshot.environmentName, files: [], secrets: snapshot.secretKeys)
        return check.problems(in: tree)
    }
}
