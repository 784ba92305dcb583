public import Logging

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How an ``Environment`` finds, selects and checks its configuration.
///
/// The defaults follow systemd's conventions: files in `$CONFIGURATION_DIRECTORY` (set by
/// `ConfigurationDirectory=`), else `/etc/<applicationName>/`; the environment from the
/// `APP_ENVIRONMENT` variable, else the build; the instance from `APP_INSTANCE`, if set.
/// The library parses no command line: a program that takes `--environment`, `--instance` or
/// `--config-dir` flags (with swift-argument-parser, say) sets ``environment``, ``instance``
/// and ``configDirectory`` from them.
public struct EnvironmentOptions: Sendable {
    /// The name used for `/etc/<applicationName>/`; by default the executable's name. Where it
    /// becomes a directory it must be what systemd allows in a unit's name (ASCII letters,
    /// digits and `:-_.\`, not `.` or `..`, at most 255 bytes), or loading fails.
    public var applicationName: String
    /// An environment selected explicitly (for example by `--environment`), which wins over
    /// the environment variable and the build.
    public var environment: String?
    /// How ``environment`` was chosen, in the words an error about it uses: "selected with
    /// --environment", say, or "given as the first argument". `nil`: "set by the application".
    /// For the package's own executables, which know the flag that set it.
    package var environmentOrigin: String?
    /// A directory selected explicitly (for example by `--config-dir`), which wins over
    /// `$CONFIGURATION_DIRECTORY` and `/etc/<applicationName>/`. It must exist. A relative
    /// path (and a relative `$CONFIGURATION_DIRECTORY` entry) is made absolute once, when an
    /// environment is made, against the working directory then; errors and listings
    /// show it absolute.
    public var configDirectory: String?
    /// The main file's name, `Environments.plist`; drop-ins live in `<fileName>.d/`.
    package var fileName: String
    /// The environment variable that selects an environment: `APP_ENVIRONMENT`.
    package var environmentVariable: String
    /// An instance selected explicitly (for example by `--instance`, or a template unit's
    /// `%i`), which wins over the `APP_INSTANCE` variable. An instance's entry in a file's
    /// `Instances` dictionary is layered right above that file's environment section.
    ///
    /// An instance names a directory (`/run/<applicationName>/<instance>/`), so it must be what
    /// systemd allows in a unit's instance: 1 to 255 ASCII letters, digits and `:-_.\@`, not
    /// `.` or `..`. Loading fails otherwise, and for such a value of `APP_INSTANCE` (an
    /// empty variable selects no instance).
    public var instance: String?
    /// The environment variable that selects an instance: `APP_INSTANCE`. A template unit
    /// sets it with `Environment=APP_INSTANCE=%i`.
    package var instanceVariable: String = "APP_INSTANCE"
    /// The prefix of the environment variables that set keys, above the files and below
    /// runtime overrides: with `APP_`, `APP_Database__Port=6432` sets `Database.Port` (`__`
    /// for each level of nesting). A level no file spells that way is matched ignoring case;
    /// the value takes the type of the value it replaces (an integer stays an integer, and one
    /// that does not parse is an error naming the variable); a key no file has is added as a
    /// string; the text is not interpolated. `APP_ENVIRONMENT` and `APP_INSTANCE` are not
    /// keys. `nil` (or empty) turns the layer off.
    ///
    /// The variables are read once, when the options are made, and do not change while the
    /// process runs: a reload applies the same ones again, and changing one (a unit's
    /// `Environment=` line) takes a restart.
    public var variablePrefix: String? = "APP_"
    /// Whether a ``ConfigurationWarning`` (a key written twice in one dictionary) fails the
    /// load as an error (``EnvironmentError/Code/strictWarning``) instead of being reported:
    /// at start the program stops, and a reload is rejected. `false` by default, as property-list
    /// readers accept such files; `envctl check --strict` asks for it in CI.
    public var warningsAreErrors = false
    /// Whether an instance that no file's `Instances` dictionary names is an error (listing
    /// the known instances) rather than an instance with no settings of its own.
    public var requiresKnownInstance = false
    /// The default environment and allowed environments from the build.
    public var build: BuildInfo
    /// Compiled-in defaults: the lowest layer. Dotted keys (`Database.Port`) reach nested
    /// dictionaries.
    package var defaults: [String: SettingValue]
    /// An `Environments.plist`-shaped dictionary used when no file exists, so a program can
    /// run on a built-in configuration. Without it a missing file is an error.
    ///
    /// Only a file that truly is not there counts as missing: a dangling or looping symbolic
    /// link, a file that cannot be read, or a ``configDirectory`` (or `$CONFIGURATION_DIRECTORY`)
    /// that does not exist is an error, and never falls back to this.
    public var builtInConfiguration: [String: SettingValue]?
    /// The process environment: `${env:VAR}`, the environment variable,
    /// `CONFIGURATION_DIRECTORY` and `CREDENTIALS_DIRECTORY` are read from here.
    package var processEnvironment: [String: String]
    /// Keys whose values are secret, in addition to each file's `Secrets` array.
    package var secretKeys: Set<String>
    /// Keys that cannot change without a restart, in addition to each file's
    /// `RestartRequired` array. A reload keeps their old value and reports them as pending.
    package var restartRequiredKeys: Set<String>
    /// The key that holds the log level (`LogLevel`), checked on every load to be one of
    /// swift-log's levels: `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`.
    /// `nil` turns the check off.
    public var logLevelKey: String? = "LogLevel"
    /// Sources of documents below the host's files, lowest first, such as a fleet
    /// configuration from etcd (`EnvironmentsEtcd`); none by default. With a source, the
    /// host's own files are optional. See ``ConfigurationSource``.
    public var sources: [any ConfigurationSource] = []
    /// The application's own check of a new configuration: throw to reject it. It runs on
    /// every load and reload, after interpolation and before the new snapshot is swapped in.
    /// It may read the environment (which still serves the current snapshot), but must not
    /// change it (reload, override or bootstrap it: changes apply one at a time, so that would
    /// wait for itself); to judge the new configuration, read the snapshot it is given.
    /// Report a rejected value with ``EnvironmentError/rejected(key:in:reason:hint:)``, which
    /// shows a secret value as `<redacted>`; in anything else it throws, the text of every
    /// secret value (of four characters or more) is replaced by `<redacted>`.
    public var validate: (@Sendable (EnvironmentSnapshot) throws -> Void)?
    /// The settings the application declares, checked at every load and reload: a value of
    /// the wrong type, out of bounds, or required but missing fails the load (all of them in
    /// one error), and a key or an `APP_` variable that no declaration covers is a
    /// ``ConfigurationWarning``. Declared secrets and restart-only settings are secret and
    /// restart-only as if listed in a file's `Secrets` and `RestartRequired` arrays, and
    /// declared defaults form the defaults layer, below every file. `nil`, the default,
    /// checks nothing. See <doc:DeclaringYourSettings>.
    public var declaration: SettingsDeclaration?
    /// Where the library logs what it reports outside a thrown error: a value of the wrong
    /// type that a read replaces with its default, and a ``Environment/shared`` that cannot
    /// load its conventional defaults. The application hands in its own (swift-log's
    /// "accepting loggers" practice); the default is a logger labelled `Environments`, made
    /// from whatever `LoggingSystem` holds when the options are made.
    public var logger = Logger(label: "Environments")

    /// The instance selected: ``instance``, else the value of the `APP_INSTANCE` variable (as
    /// ``instance`` describes); `nil` for none. A source whose documents differ by
    /// host reads it.
    public var selectedInstance: String? {
        if let instance, !instance.isEmpty { return instance }
        if let value = processEnvironment[instanceVariable], !value.isEmpty { return value }
        return nil
    }

    /// Files to read as if they were on disk with these contents, by absolute path: the main
    /// file or a drop-in, replacing the file there or added to the drop-ins. What
    /// `envctl set`, `unset` and `edit` check before they install a file.
    package var candidateDocuments: [String: Data] = [:]

    /// Whether a `${credential:NAME}` that cannot be read here (`$CREDENTIALS_DIRECTORY` is not
    /// set, or this user may not read the file) stands for `<credential NAME: not readable
    /// here>` instead of failing the load: how envctl reads the files from an operator's shell.
    /// The value stays secret; `EnvironmentSnapshot.unreadableCredentials` names the keys.
    package var unreadableCredentialsAsPlaceholders = false

    /// The directory that holds `<applicationName>/` by default: `/etc`. Tests point it
    /// elsewhere, as the application name cannot climb out of it.
    package var systemConfigurationRoot = "/etc"

    /// The variable systemd sets from `ConfigurationDirectory=`.
    package static let configurationDirectoryVariable = "CONFIGURATION_DIRECTORY"
    /// The variable systemd sets for `LoadCredential=` and `SetCredential=`.
    package static let credentialsDirectoryVariable = "CREDENTIALS_DIRECTORY"

    /// Creates options; every parameter has the conventional default.
    ///
    /// - Parameters:
    ///   - applicationName: The name used for `/etc/<applicationName>/`.
    ///   - environment: An environment selected explicitly (by `--environment`, say).
    ///   - configDirectory: A directory selected explicitly (by `--config-dir`, say).
    ///   - build: The default environment and allowed environments from the build.
    ///   - builtInConfiguration: An `Environments.plist`-shaped dictionary for when no file exists.
    ///   - validate: The application's own check of a new configuration.
    public init(
        applicationName: String = EnvironmentOptions.executableName,
        environment: String? = nil,
        configDirectory: String? = nil,
        build: BuildInfo = BuildInfo(),
        builtInConfiguration: [String: SettingValue]? = nil,
        validate: (@Sendable (EnvironmentSnapshot) throws -> Void)? = nil
    ) {
        self.init(
            applicationName: applicationName, environment: environment, configDirectory: configDirectory,
            fileName: "Environments.plist", environmentVariable: "APP_ENVIRONMENT", build: build, defaults: [:],
            builtInConfiguration: builtInConfiguration, processEnvironment: ProcessInfo.processInfo.environment,
            secretKeys: [], restartRequiredKeys: [], validate: validate)
    }

    /// Creates options with the parts that only the package's own executables and tests set:
    /// another file name or selecting variable, an in-memory process environment, keys made
    /// secret, restart-only or defaulted outside a declaration.
    package init(
        applicationName: String = EnvironmentOptions.executableName,
        environment: String? = nil,
        configDirectory: String? = nil,
        fileName: String = "Environments.plist",
        environmentVariable: String = "APP_ENVIRONMENT",
        build: BuildInfo = BuildInfo(),
        defaults: [String: SettingValue] = [:],
        builtInConfiguration: [String: SettingValue]? = nil,
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment,
        secretKeys: Set<String> = [],
        restartRequiredKeys: Set<String> = [],
        validate: (@Sendable (EnvironmentSnapshot) throws -> Void)? = nil
    ) {
        self.applicationName = applicationName
        self.environment = environment
        self.configDirectory = configDirectory
        self.fileName = fileName
        self.environmentVariable = environmentVariable
        self.build = build
        self.defaults = defaults
        self.builtInConfiguration = builtInConfiguration
        self.processEnvironment = processEnvironment
        self.secretKeys = secretKeys
        self.restartRequiredKeys = restartRequiredKeys
        self.validate = validate
    }

    /// The running executable's file name.
    @usableFromInline
    package static var executableName: String {
        let path = CommandLine.arguments.first ?? "app"
        let name = PathNames.lastComponent(of: path)
        return name.isEmpty ? "app" : name
    }
}

extension EnvironmentOptions {
    /// These options made to mean the same wherever the process goes next: a relative
    /// ``configDirectory``, relative `$CONFIGURATION_DIRECTORY` entries and relative candidate
    /// paths made absolute against `workingDirectory`; and the selected instance checked as a
    /// name (``PathComponentName``), as it becomes a directory (`/run/<name>/<instance>/`).
    ///
    /// An environment does this once, when it is made: a daemon started with `--config-dir cfg`
    /// reads, watches and reports (the journal, the state file, the control socket) the one
    /// absolute directory, and envctl run from elsewhere writes exactly where it reads.
    ///
    /// - Throws: ``EnvironmentError/Code/invalidName`` for an instance that is not a valid name.
    package func anchored(at workingDirectory: String? = Self.workingDirectory) throws(EnvironmentError)
        -> EnvironmentOptions
    {
        try checkNames()
        return anchoringPaths(at: workingDirectory)
    }

    /// Checks the selected instance as a name (``PathComponentName``).
    package func checkNames() throws(EnvironmentError) {
        if let instance {
            _ = try PathComponentName(instance, kind: .instance, from: "the instance option (--instance)")
        } else if let value = processEnvironment[instanceVariable], !value.isEmpty {
            _ = try PathComponentName(value, kind: .instance, from: "$\(instanceVariable)")
        }
    }

    /// These options with their relative paths made absolute against `workingDirectory`.
    package func anchoringPaths(at workingDirectory: String? = Self.workingDirectory) -> EnvironmentOptions {
        guard let workingDirectory else { return self }
        var options = self
        if let directory = configDirectory, !directory.isEmpty {
            options.configDirectory = Self.absolute(directory, against: workingDirectory)
        }
        if let directories = processEnvironment[Self.configurationDirectoryVariable] {
            options.processEnvironment[Self.configurationDirectoryVariable] =
                directories.split(separator: ":", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : Self.absolute(String($0), against: workingDirectory) }
                .joined(separator: ":")
        }
        options.candidateDocuments = Dictionary(
            candidateDocuments.map { (Self.absolute($0.key, against: workingDirectory), $0.value) },
            uniquingKeysWith: { _, last in last })
        return options
    }

    /// The process's working directory, or `nil` when it cannot be told (it was removed).
    package static var workingDirectory: String? {
        guard let path = getcwd(nil, 0) else { return nil }
        defer { free(path) }
        return String(cString: path)
    }

    /// `path` made absolute against `directory`: unchanged when absolute; else joined, without
    /// `.` components, empty components or a trailing `/` (`..` stays: a symbolic link may
    /// make it mean something else than the component before it).
    package static func absolute(_ path: String, against directory: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        let components = (directory + "/" + path).split(separator: "/").filter { $0 != "." }
        return "/" + components.joined(separator: "/")
    }
}
