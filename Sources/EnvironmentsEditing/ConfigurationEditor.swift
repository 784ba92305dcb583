import Environments
import Foundation

/// Changes an application's configuration as safely as `envctl set`, `unset` and `edit` do:
/// in one drop-in (`Environments.plist.d/NAME.plist`), only when the whole resulting
/// configuration is valid, and only where the change takes effect.
///
/// Each change takes the drop-in directory's lock (the one `envctl` takes, so the two never
/// lose each other's changes), builds the configuration with the new drop-in for every
/// environment the files define, and refuses the change, writing nothing, when any of them
/// fails to build (the error names the file and line), when a key written is outweighed
/// somewhere (a later drop-in, an environment's or instance's section, an `APP_` variable of
/// `EnvironmentOptions.processEnvironment`), when a key written holds a character that other
/// property-list readers refuse, or, with a declaration, when a key written is not declared
/// (with the declared key spelled nearly the same). Only then the drop-in is replaced
/// atomically, keeping its owner, group, mode and access control lists.
///
/// ```swift
/// let editor = try ConfigurationEditor(
///     options: EnvironmentOptions(applicationName: "orders", configDirectory: "/etc/orders"))
/// let edit = try editor.set("LogLevel", to: .string("debug"), environment: "Staging")
/// print("changed \(edit.keys) in \(edit.file)")
/// ```
///
/// The daemon applies the new file on its next reload (its file watcher, or
/// `systemctl reload`). The editor checks the files alone: the running daemon's own
/// validation, which `envctl` asks over its control socket, is not part of it. Its methods
/// block (files, a lock held by another change): call them off Swift's cooperative pool.
/// A refusal is an `Error` whose description says what is wrong and that nothing was written.
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
    ///   - declaration: The application's settings, to refuse keys that nothing reads; `nil`:
    ///     keys are not checked against a declaration.
    /// - Throws: When `dropIn` cannot be a file's name.
    public init(options: EnvironmentOptions, dropIn: String? = nil, declaration: SettingsDeclaration? = nil) throws {
        var options = options.anchoringPaths()
        // A credential this process cannot read is checked by the daemon, which has it.
        options.unreadableCredentialsAsPlaceholders = true
        self.options = options
        self.directory = ConfigurationLocation(options: options).directory
        self.dropIn = dropIn
        self.declaration = declaration.map { KnownDeclaration($0, source: "the declaration given") }
        self.dropInPath = try Self.engine(directory, dropIn, options).path
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
    ///   - allowUndeclared: Write a key the declaration does not cover all the same.
    /// - Throws: The refusal; nothing was written.
    public func set(
        _ key: String, to value: SettingValue, environment: String? = nil, allowShadowed: Bool = false,
        allowUndeclared: Bool = false
    ) throws -> ConfigurationEdit {
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
            key, components: components, to: typed, in: environment ?? "Common", allowShadowed: allowShadowed)
        return ConfigurationEdit(file: dropInPath, outcome: outcome)
    }

    /// Removes `keys` from `Common` or from `environment`'s dictionary of the drop-in.
    ///
    /// - Throws: The refusal (a key the drop-in does not set, one whose value was in effect
    ///   nowhere unless `allowShadowed`); nothing was written.
    public func unset(_ keys: [String], environment: String? = nil, allowShadowed: Bool = false) throws
        -> ConfigurationEdit
    {
        let outcome = try engine().unset(keys, in: environment ?? "Common", allowShadowed: allowShadowed)
        return ConfigurationEdit(file: dropInPath, outcome: outcome)
    }

    /// Replaces the drop-in with `contents` (an XML or binary property list, as an operator
    /// edited it), if it still holds `expected` (`nil`: it does not exist): what `envctl edit`
    /// installs, for an editor in another tool (a web console's text area).
    ///
    /// - Throws: The refusal, with the line in `contents` where one is known, or that the
    ///   drop-in changed since `expected` was read; nothing was written.
    public func install(
        _ contents: Data, replacing expected: Data?, allowShadowed: Bool = false, allowUndeclared: Bool = false
    ) throws -> ConfigurationEdit {
        let outcome: Result<DropInEditor.Outcome, Failure>
        do {
            outcome = try engine().install(
                contents, over: expected, allowShadowed: allowShadowed,
                declaration: allowUndeclared ? nil : declaration, override: "pass allowUndeclared: true")
        } catch is DropInFile.Changed {
            throw Failure(
                "\(dropInPath) no longer holds what the edit began with (someone else changed it); nothing was written")
        }
        return ConfigurationEdit(file: dropInPath, outcome: try outcome.get())
    }

    private func engine() throws -> DropInEditor {
        try Self.engine(directory, dropIn, options)
    }

    private static func engine(_ directory: String, _ dropIn: String?, _ options: EnvironmentOptions) throws
        -> DropInEditor
    {
        try DropInEditor(
            directory: directory, dropIn: dropIn, origin: "the drop-in's name", options: { options })
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
