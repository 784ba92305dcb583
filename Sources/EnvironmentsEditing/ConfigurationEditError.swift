public import Environments
import TextEscaping

/// A change that ``ConfigurationEditor`` refused or could not make; nothing was written.
///
/// Match on ``code`` to tell the cases apart; ``description`` is the sentence to show an
/// operator: what failed, where (the key, the file and, where known, the line), that nothing
/// was written, and what to do. A secret value is never in it: where the value written is
/// secret (declared `secret`, or listed in `Secrets`), the message leaves it out.
///
/// ```swift
/// do {
///     _ = try editor.set("Port", to: .integer(70000))
/// } catch where error.code == .rejectedValue {
///     show("\(error.key ?? "?"): \(error.message)")   // 'Port' is out of range ...
/// }
/// ```
public struct ConfigurationEditError: Error, Sendable, Hashable {
    /// What kind of failure this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case invalidName, invalidKey, unwritableCharacter, undeclaredKey, rejectedValue
            case invalidConfiguration, shadowedKey, keyNotSet, malformedFile, fileUnreadable
            case fileUnwritable, lockUnavailable, conflict
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The drop-in's name cannot be a file's name (it holds a `/`, is `..`, is empty).
        public static let invalidName = Code(.invalidName)
        /// A key path is malformed or past a bound of `SettingPath`, or it goes through a value
        /// that is not a dictionary (`Database.Host` where `Database` is a string).
        public static let invalidKey = Code(.invalidKey)
        /// A key or a string holds a character that other property-list readers refuse or
        /// read back otherwise (a control character, a carriage return).
        public static let unwritableCharacter = Code(.unwritableCharacter)
        /// A key written is not covered by the declaration (nothing would read it); ``message``
        /// names the declared key spelled nearly the same, if there is one.
        public static let undeclaredKey = Code(.undeclaredKey)
        /// The declaration refuses a value written: of the wrong type, out of its bounds, or
        /// failing its rule (a pattern, a list of allowed values, URL schemes); or the
        /// application's own validation (`EnvironmentOptions.validate`) refuses it. ``key`` is
        /// the key refused, ``configurationError`` the load's error.
        public static let rejectedValue = Code(.rejectedValue)
        /// The configuration with the change fails to load for an environment, for another
        /// reason than a value written (an interpolation that cannot be resolved, a required
        /// key with no value, ...); ``configurationError`` is the load's error.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A key written does not take effect everywhere it applies (a later drop-in, an
        /// environment's or instance's section, an `APP_` variable outweighs it), or a key
        /// removed was in effect nowhere. `allowShadowed` makes the change all the same.
        public static let shadowedKey = Code(.shadowedKey)
        /// A key to remove is not set by the drop-in (or the drop-in does not exist).
        public static let keyNotSet = Code(.keyNotSet)
        /// A file of the configuration, or the contents given to install, is not a property
        /// list, or its root or a section is not a dictionary.
        public static let malformedFile = Code(.malformedFile)
        /// A file cannot be read: permissions, a symbolic link where the drop-in should be,
        /// not a regular file, too large.
        public static let fileUnreadable = Code(.fileUnreadable)
        /// The drop-in (or its directory) cannot be written: permissions, a full disk, an
        /// owner, group or access control list that cannot be kept.
        public static let fileUnwritable = Code(.fileUnwritable)
        /// The drop-in directory's lock cannot be taken: another change has held it too long,
        /// or the lock file is not one `envctl` made.
        public static let lockUnavailable = Code(.lockUnavailable)
        /// The drop-in no longer holds what the change began with: someone else changed it
        /// (``ConfigurationEditor/install(_:replacing:allowShadowed:allowUndeclared:)``'s
        /// `expected`), or it kept changing while the change was checked.
        public static let conflict = Code(.conflict)

        /// The code's name, for example `rejectedValue`.
        public var description: String { kind.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in sentences, as `envctl` says it: where, that nothing was written, and
    /// what to do.
    public var message: String
    /// The key involved, if one is (a dotted path).
    public var key: String?
    /// The environment whose configuration failed to load with the change, if one did.
    public var environment: String?
    /// The file involved, if one is known: the drop-in, the main file, the lock file.
    public var file: String?
    /// The line in ``file``, where one is known.
    public var line: Int?
    /// What to do, naming a tool the operator has, when ``message`` does not say it already.
    public var hint: String?
    /// The error of the configuration's load with the change, for `Code.rejectedValue` and
    /// `Code.invalidConfiguration`: its own code, key, file and line.
    public var configurationError: EnvironmentError?

    init(
        _ code: Code, _ message: String, key: String? = nil, environment: String? = nil, file: String? = nil,
        line: Int? = nil, hint: String? = nil, configurationError: EnvironmentError? = nil
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.environment = environment
        self.file = file
        self.line = line
        self.hint = hint
        self.configurationError = configurationError
    }
}

extension ConfigurationEditError: CustomStringConvertible {
    /// The message and then the hint, on one line, control characters escaped.
    public var description: String {
        guard let hint, !message.contains(hint) else { return ControlCharacters.escaped(message) }
        let joiner = message.last.map { ".?!".contains($0) ? " " : ". " } ?? ""
        return ControlCharacters.escaped(message + joiner + hint)
    }
}
