import TextEscaping

/// An error from loading, reloading or reading configuration.
///
/// Every error names what failed and, where known, the key, the environment, the file and
/// the line, and says what to do. ``description`` renders all of that on one line, ready
/// for a log or a terminal.
public struct EnvironmentError: Error, Sendable, Hashable {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code's name: one of the constants below, or one another version of the library
        /// named (an error read back from a daemon's answer or its journal).
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The code named `name`, for example `malformedFile`: an error as another process told
        /// it (the control socket's `ConfigurationError`, the journal's `CONFIG_ERROR_CODE`),
        /// whose code may be one this version does not know.
        package init(named name: String) { self.name = name }

        /// No configuration file where it was looked for.
        public static let fileNotFound = Code("fileNotFound")
        /// A file exists but cannot be read.
        public static let fileUnreadable = Code("fileUnreadable")
        /// A file is not a valid property list.
        public static let malformedFile = Code("malformedFile")
        /// A file's root is not a dictionary.
        public static let invalidRoot = Code("invalidRoot")
        /// `Common`, an environment section, `Secrets` or `RestartRequired` has the wrong type.
        public static let invalidSection = Code("invalidSection")
        /// A drop-in file is wrong in a way that is specific to drop-ins.
        public static let invalidDropIn = Code("invalidDropIn")
        /// The selected environment is not defined in any file.
        public static let unknownEnvironment = Code("unknownEnvironment")
        /// The selected instance is named in no file's `Instances`, and the application
        /// requires a known one (``EnvironmentOptions/requiresKnownInstance``).
        public static let unknownInstance = Code("unknownInstance")
        /// The selected environment is not in the build's `AllowedEnvironments`.
        public static let disallowedEnvironment = Code("disallowedEnvironment")
        /// A required key has no value.
        public static let missingKey = Code("missingKey")
        /// A key holds a value of another type than requested.
        public static let typeMismatch = Code("typeMismatch")
        /// `${Key}` references form a cycle.
        public static let interpolationCycle = Code("interpolationCycle")
        /// `${Key}` names a key that has no value, or one that is not a scalar.
        public static let unresolvedReference = Code("unresolvedReference")
        /// `${env:VAR}` names an unset environment variable.
        public static let missingEnvironmentVariable = Code("missingEnvironmentVariable")
        /// `${credential:NAME}` names a credential that is not there.
        public static let missingCredential = Code("missingCredential")
        /// A `${` without its `}`, or an unknown `${kind:...}`.
        public static let invalidInterpolation = Code("invalidInterpolation")
        /// Interpolation would build a value longer than 1 MiB, or more than 16 MiB for the
        /// whole configuration (what keys that repeat each other, `A2 = ${A1}${A1}`, reach in a
        /// few lines), or a credential is longer than 1 MiB. The error names the key and its file.
        public static let interpolationLimitExceeded = Code("interpolationLimitExceeded")
        /// The application's validation rejected the configuration.
        public static let validationFailed = Code("validationFailed")
        /// A section could not be decoded into the requested type.
        public static let decodingFailed = Code("decodingFailed")
        /// A name that becomes part of a path (an application name, an instance, a drop-in's
        /// name) is not a valid one: it could name a file elsewhere.
        public static let invalidName = Code("invalidName")
        /// ``Environment/bootstrap(_:)`` was called after an earlier call had succeeded.
        public static let alreadyBootstrapped = Code("alreadyBootstrapped")
        /// A key path is malformed (an empty component: a leading, trailing or doubled `.`; a
        /// quote not closed) or past a bound of ``SettingPath`` (depth, length). The error names
        /// the key as written and, for a file, the file and the line.
        public static let invalidKey = Code("invalidKey")
        /// A ``ConfigurationWarning`` (a key written twice in one dictionary) in a load that asks
        /// for strictness (``EnvironmentOptions/warningsAreErrors``, `envctl check --strict`).
        public static let strictWarning = Code("strictWarning")
        /// ``EnvironmentOptions/validate`` called ``Environment/reload()``,
        /// ``Environment/setOverride(_:forKey:)``, ``Environment/removeAllOverrides()``,
        /// a check or ``Environment/bootstrap(_:)`` for the environment whose
        /// change it is judging: that change is still being made, and would wait for itself.
        public static let reentrantChange = Code("reentrantChange")

        /// The code's name, for example `malformedFile`.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in a sentence.
    public var message: String
    /// The key involved, if any (a dotted path).
    public var key: String?
    /// The selected environment, if known.
    public var environment: String?
    /// The file involved, if any.
    public var file: String?
    /// The line in ``file``, where the parser reports one.
    public var line: Int?
    /// Every file that was searched or read, for errors about missing values.
    public var searchedFiles: [String]
    /// What to do about it.
    public var hint: String?
    /// The whole error on one line as another process wrote it (the control socket's
    /// `ConfigurationError.description`, the journal's `CONFIG_ERROR`), which ``description``
    /// returns as it was: its hint and details are in it, not in the fields above. `nil` for
    /// an error made in this process.
    package var toldDescription: String?

    /// Creates an error (an application rejects a value with ``rejected(key:in:reason:hint:)``).
    package init(
        _ code: Code,
        _ message: String,
        key: String? = nil,
        environment: String? = nil,
        file: String? = nil,
        line: Int? = nil,
        searchedFiles: [String] = [],
        hint: String? = nil
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.environment = environment
        self.file = file
        self.line = line
        self.searchedFiles = searchedFiles
        self.hint = hint
    }

    /// `file:line` (or `file`) when a file is known, else empty: the place editors and
    /// compilers name, so terminals can jump to the spot (``description`` puts `: ` after it).
    package var location: String {
        guard let file else { return "" }
        if let line { return "\(file):\(line)" }
        return file
    }
}

extension EnvironmentError: CustomStringConvertible {
    /// One line: location, message, key, environment, files searched and the hint.
    ///
    /// Control characters that a file name, key or value may hold (a line feed, ESC, NUL) are
    /// escaped as Swift writes them in string literals (`\n`, `\u{1B}`, `\0`), so the line
    /// stays one line and cannot drive a terminal.
    public var description: String {
        if let toldDescription { return toldDescription }
        var text = location.isEmpty ? message : "\(location): \(message)"
        var details: [String] = []
        if let key, !message.contains("'\(key)'") { details.append("key '\(key)'") }
        if let environment, !message.contains("'\(environment)'") {
            details.append("environment '\(environment)'")
        }
        if !searchedFiles.isEmpty { details.append("searched: " + searchedFiles.joined(separator: ", ")) }
        if !details.isEmpty { text += " (" + details.joined(separator: "; ") + ")" }
        if let hint { text = Sentences.joining(text, hint: hint) }
        return ControlCharacters.escaped(text)
    }
}
