public import Environments

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Changes an application's configuration as safely as `envctl set`, `unset` and `edit` do:
/// in one drop-in (`Environments.plist.d/NAME.plist`), only when the whole resulting
/// configuration is valid, and only where the change takes effect.
///
/// Each change takes the drop-in directory's lock (the one `envctl` takes, so the two never
/// lose each other's changes), builds the configuration with the new drop-in for every
/// environment the files define, as the daemon builds it (with the declaration: its types,
/// bounds, rules and required keys), and refuses the change, writing nothing, when any of them
/// fails to build (the error names the file and line), when a key written is outweighed
/// somewhere (a later drop-in, an environment's or instance's section, an `APP_` variable of
/// `EnvironmentOptions.processEnvironment`), when a key written holds a character that other
/// property-list readers refuse, or, with a declaration, when a value written is not one it
/// accepts or a key written is not declared (with the declared key spelled nearly the same).
/// Only then the drop-in is replaced atomically, keeping its owner, group, mode and access
/// control lists.
///
/// ```swift
/// let editor = try ConfigurationEditor(
///     options: EnvironmentOptions(applicationName: "orders", configDirectory: "/etc/orders"),
///     declaration: Settings.declaration)
/// let edit = try editor.set("LogLevel", to: .string("debug"), environment: "Staging")
/// print("changed \(edit.keys) in \(edit.file)")
/// ```
///
/// The daemon applies the new file on its next reload (its file watcher, or
/// `systemctl reload`). The editor checks the files alone: the running daemon's own
/// validation, which `envctl` asks over its control socket, is not part of it (pass its
/// declaration, and its `EnvironmentOptions.validate`, in `options`). Its methods block
/// (files, a lock held by another change): call them off Swift's cooperative pool. Every
/// refusal is a ``ConfigurationEditError``, whose ``ConfigurationEditError/code`` says what
/// kind it is; nothing was written.
public struct ConfigurationEditor: Sendable {
    /// The drop-in this editor changes, absolute:
    /// `<configuration directory>/Environments.plist.d/<name>.plist`.
    public let dropInPath: String
    private let directory: String
    private let dropIn: String?
    private let options: EnvironmentOptions
    private let declaration: KnownDeclaration?

    /// An editor of the drop-in `dropIn` (with or without `.plist`; default `90-local`, which
    /// sorts after the drop-ins a package ships) of the configuration `options` locate
    /// (`EnvironmentOptions.configDirectory`, else `$CONFIGURATION_DIRECTORY`, else
    /// `/etc/<applicationName>/`).
    ///
    /// - Parameters:
    ///   - options: What locates the configuration and builds it, as the daemon's options do.
    ///   - dropIn: The drop-in's name; `nil`: `90-local`.
    ///   - declaration: The application's settings: a value written must be one they accept
    ///     (type, bounds, rules), and a key written one they declare. `nil`:
    ///     `options.declaration`, if any.
    /// - Throws: ``ConfigurationEditError/Code/invalidName`` when `dropIn` cannot be a file's
    ///   name.
    public init(options: EnvironmentOptions, dropIn: String? = nil, declaration: SettingsDeclaration? = nil)
        throws(ConfigurationEditError)
    {
        var options = options.anchoringPaths()
        // A credential this process cannot read is checked by the daemon, which has it.
        options.unreadableCredentialsAsPlaceholders = true
        // Every build is checked against the declaration, as the daemon's load is.
        let declared = declaration ?? options.declaration
        options.declaration = declared
        let directory = ConfigurationLocation(options: options).directory
        self.options = options
        self.directory = directory
        self.dropIn = dropIn
        self.declaration = declared.map {
            KnownDeclaration(
                $0, source: declaration == nil ? "EnvironmentOptions.declaration" : "the declaration given")
        }
        self.dropInPath = try Self.refusing(writing: []) { [options] in
            try Self.engine(directory, dropIn, options).path
        }
    }

    /// Sets `key` (a dotted path reaches nested dictionaries: `Database.Host`) to `value`, in
    /// `Common` or in `environment`'s dictionary.
    ///
    /// - Parameters:
    ///   - key: The key path.
    ///   - value: Its new value.
    ///   - environment: The environment whose dictionary to write into; `nil`: `Common`.
    ///   - allowShadowed: Write the key even where something else outweighs it (said in
    ///     ``ConfigurationEdit/notes``).
    ///   - allowUndeclared: Write a key the declaration does not cover all the same (its value
    ///     is not checked, as the daemon does not check it).
    /// - Throws: The refusal; nothing was written. ``ConfigurationEditError/Code/rejectedValue``
    ///   when the declaration (or the application's validation) refuses `value`.
    public func set(
        _ key: String, to value: SettingValue, environment: String? = nil, allowShadowed: Bool = false,
        allowUndeclared: Bool = false
    ) throws(ConfigurationEditError) -> ConfigurationEdit {
        let section = environment ?? "Common"
        return try Self.refusing(writing: [key]) {
            let components = try DropInDocument.components(key)
            let typed = value.anyValue
            try XMLCharacters.check(key: key, value: typed)
            if !allowUndeclared,
                let refusal = declaration?.refusal(
                    key, components: components, verb: "set", override: "pass allowUndeclared: true")
            {
                throw refusal
            }
            let outcome = try engine().set(
                key, components: components, to: typed, in: section, allowShadowed: allowShadowed)
            return ConfigurationEdit(file: dropInPath, outcome: outcome)
        }
    }

    /// Removes `keys` from `Common` or from `environment`'s dictionary of the drop-in.
    ///
    /// - Throws: The refusal (``ConfigurationEditError/Code/keyNotSet``: a key the drop-in does
    ///   not set; ``ConfigurationEditError/Code/shadowedKey``: one whose value was in effect
    ///   nowhere, unless `allowShadowed`); nothing was written.
    public func unset(_ keys: [String], environment: String? = nil, allowShadowed: Bool = false)
        throws(ConfigurationEditError) -> ConfigurationEdit
    {
        try Self.refusing(writing: []) {
            let outcome = try engine().unset(keys, in: environment ?? "Common", allowShadowed: allowShadowed)
            return ConfigurationEdit(file: dropInPath, outcome: outcome)
        }
    }

    /// Replaces the drop-in with `contents` (an XML or binary property list, as an operator
    /// edited it), if it still holds `expected` (`nil`: it does not exist): what `envctl edit`
    /// installs, for an editor in another tool (a web console's text area).
    ///
    /// - Throws: The refusal, with the line in `contents` where one is known
    ///   (``ConfigurationEditError/Code/rejectedValue`` for a value it writes that the
    ///   declaration refuses), or ``ConfigurationEditError/Code/conflict`` when the drop-in
    ///   changed since `expected` was read; nothing was written.
    public func install(
        _ contents: Data, replacing expected: Data?, allowShadowed: Bool = false, allowUndeclared: Bool = false
    ) throws(ConfigurationEditError) -> ConfigurationEdit {
        let path = dropInPath
        let written = Self.writtenKeys(contents, replacing: expected, path: path)
        return try Self.refusing(writing: written) {
            let outcome: Result<DropInEditor.Outcome, Failure>
            do {
                outcome = try engine().install(
                    contents, over: expected, allowShadowed: allowShadowed,
                    declaration: allowUndeclared ? nil : declaration, override: "pass allowUndeclared: true")
            } catch is DropInFile.Changed {
                throw Failure(
                    .conflict,
                    "\(path) no longer holds what the edit began with (someone else changed it); nothing was written",
                    file: path)
            }
            return ConfigurationEdit(file: path, outcome: try outcome.get())
        }
    }

    private func engine() throws -> DropInEditor {
        var engine = try Self.engine(directory, dropIn, options)
        engine.declaration = options.declaration
        return engine
    }

    private static func engine(_ directory: String, _ dropIn: String?, _ options: EnvironmentOptions) throws
        -> DropInEditor
    {
        try DropInEditor(
            directory: directory, dropIn: dropIn, origin: "the drop-in's name", options: { options })
    }

    /// The keys `contents` writes that `expected` did not hold as they are (`Staging.Port`
    /// as `Port`), for telling a refused value from another problem; empty when either is
    /// not a property list.
    private static func writtenKeys(_ contents: Data, replacing expected: Data?, path: String) -> [String] {
        guard let old = try? DropInDocument.root(expected, path: path),
            let new = try? DropInDocument.root(contents, path: path)
        else { return [] }
        return ChangedKey.differences(old: old, new: new).filter { $0.kind == .written }.map(\.key)
    }

    /// `body`'s result, or its failure as a ``ConfigurationEditError``: a value refused by the
    /// declaration (or the application's validation) is ``ConfigurationEditError/Code/rejectedValue``
    /// when it is one of `written`.
    private static func refusing<Result>(writing written: [String], _ body: () throws -> Result)
        throws(ConfigurationEditError) -> Result
    {
        do {
            return try body()
        } catch {
            throw ConfigurationEditError(error, writing: written)
        }
    }
}

extension ConfigurationEditError {
    /// The public form of the engine's failure `error`, during a change that writes `written`.
    init(_ error: any Error, writing written: [String]) {
        let failure: Failure
        switch error {
        case let error as Failure: failure = error
        case let error as EnvironmentError: failure = Failure(loading: error, environment: nil)
        // The engine throws its failures; anything else is a file it could not use.
        default: failure = Failure(.fileUnwritable, "\(error); nothing was written")
        }
        var code = failure.code ?? .invalidConfiguration
        var hint: String?
        if code == .invalidConfiguration, let loaded = failure.configurationError,
            loaded.code == .validationFailed || loaded.code == .typeMismatch, let key = loaded.key,
            let refused = try? SettingPath(parsing: key).components,
            written.contains(where: { (try? SettingPath(parsing: $0).components) == refused })
        {
            code = .rejectedValue
            hint = "Nothing was written; envctl explain \(key) describes the values it accepts"
        }
        self.init(
            code, failure.description, key: failure.key, environment: failure.environment, file: failure.file,
            line: failure.line, hint: hint, configurationError: failure.configurationError)
    }
}

/// A change that ``ConfigurationEditor`` made: the drop-in written, the keys it changed, and
/// what to tell the operator.
public struct ConfigurationEdit: Sendable {
    /// The drop-in written, absolute.
    public let file: String
    /// The keys changed, each in its section: `Common.LogLevel`, `Staging.Database.Host`.
    public let keys: [String]
    /// Notes for the operator: a change written where it does not take effect everywhere
    /// (with `allowShadowed`), values an environment or instance set for itself that a change
    /// to `Common` replaces.
    public let notes: [String]

    init(file: String, outcome: DropInEditor.Outcome) {
        self.file = file
        self.keys = outcome.changes.map(\.label)
        self.notes = outcome.notes
    }
}
