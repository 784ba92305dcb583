/// Every setting an application declares, checked at every load when set as
/// ``EnvironmentOptions/declaration``.
///
/// At start and at every reload, one pass finds every problem: a value of the wrong type,
/// out of its bounds, or required but missing fails the load with one
/// ``EnvironmentError/Code/validationFailed`` error that lists them all (the running
/// configuration stays). A key that no declaration covers, an environment variable that names
/// no declared key, and a former name are ``ConfigurationWarning``s, errors under
/// ``EnvironmentOptions/warningsAreErrors``. See <doc:DeclaringYourSettings>.
///
/// A declared key covers everything below it: declaring `Upstreams` as a map (or a section)
/// declares its free keys.
public struct SettingsDeclaration: Sendable {
    /// The declarations, in the order given.
    package let settings: [SettingDeclaration]
    /// Declarations by key.
    let byKey: [String: SettingDeclaration]
    /// Former name -> the key it is now.
    let formerNames: [String: String]
    /// The declared keys as a tree of names, to tell a configuration's keys apart in one walk.
    let root: DeclaredLevel
    /// Mistakes in the declaration itself (a key declared twice), reported at every load.
    let mistakes: [String]
    /// What every load takes from the declaration, gathered once here rather than at each
    /// load (a load then copies no ``SettingDeclaration``): the declared defaults with their
    /// paths, the secret and restart-only keys, and every key and former name.
    let defaults: [(path: [String], value: SettingValue)]
    package let secretKeys: Set<String>
    let restartOnlyKeys: Set<String>
    let keysAndFormerNames: Set<String>

    /// Collects declarations:
    ///
    /// ```swift
    /// options.declaration = SettingsDeclaration([Settings.listenPort, Settings.password])
    /// ```
    ///
    /// A key declared twice, or a former name that is also a key or another setting's former
    /// name, fails every load with an error that names it (the first declaration is used).
    public init(_ settings: [any SettingDeclaring]) {
        var list: [SettingDeclaration] = []
        var byKey: [String: SettingDeclaration] = [:]
        var formerNames: [String: String] = [:]
        var root = DeclaredLevel()
        var mistakes: [String] = []
        for setting in settings {
            let declaration = setting.declaration
            guard byKey[declaration.key] == nil else {
                mistakes.append("'\(declaration.key)' is declared twice")
                continue
            }
            byKey[declaration.key] = declaration
            list.append(declaration)
            root.insert(declaration.components)
        }
        for declaration in list {
            for former in declaration.formerNames {
                if byKey[former] != nil || formerNames[former] != nil {
                    mistakes.append(
                        "'\(former)', a former name of '\(declaration.key)', is also declared elsewhere")
                    continue
                }
                formerNames[former] = declaration.key
            }
        }
        self.settings = list
        self.byKey = byKey
        self.formerNames = formerNames
        self.root = root
        self.mistakes = mistakes
        self.defaults = list.compactMap { setting in setting.defaultValue.map { (setting.components, $0) } }
        self.secretKeys = Set(list.lazy.filter(\.isSecret).map(\.key))
        self.restartOnlyKeys = Set(list.lazy.filter(\.isRestartOnly).map(\.key))
        self.keysAndFormerNames = Set(byKey.keys).union(formerNames.keys)
    }

    /// The declaration of a key (``SettingPath`` text), if any.
    package func declaration(forKey key: String) -> SettingDeclaration? {
        byKey[SettingPath.canonical(key) ?? key]
    }

    /// Whether no declared key covers the key path `components`, by the rule the load's
    /// `unknownKey` warning follows (a declared key covers everything below it), with the
    /// declared key spelled nearly the same, if any: `nil` when it is declared.
    package func undeclared(_ components: [String]) -> UndeclaredKey? {
        var level = root
        for (index, name) in components.enumerated() {
            guard let child = level.children[name] else {
                let suggestion = DeclarationCheck.suggestion(for: name, among: level).map {
                    SettingPath.text(of: components[..<index] + [$0])
                }
                return UndeclaredKey(suggestion: suggestion)
            }
            if child.isDeclared { return nil }
            level = child
        }
        // A level on the way to declared keys, not a setting itself.
        return UndeclaredKey(suggestion: nil)
    }
}

/// A key path no declared key covers (``SettingsDeclaration/undeclared(_:)``).
package struct UndeclaredKey: Sendable, Hashable {
    /// The declared key spelled nearly the same, if any.
    package let suggestion: String?
}

/// One level of the declared keys: the names declared there, each a declared key (which covers
/// everything below it) or a level on the way to one.
struct DeclaredLevel: Sendable {
    var children: [String: DeclaredLevel] = [:]
    /// Whether the path to here is itself declared.
    var isDeclared = false

    mutating func insert<C: Collection<String>>(_ path: C) {
        guard let first = path.first else {
            isDeclared = true
            return
        }
        children[first, default: DeclaredLevel()].insert(path.dropFirst())
    }
}
