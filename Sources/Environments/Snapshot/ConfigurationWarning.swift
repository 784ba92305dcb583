import TextEscaping

/// Something in the configuration that loads, but that an operator should fix: a key written
/// twice in one dictionary (whose last copy is used, as every property-list reader does) and,
/// with a declaration (``EnvironmentOptions/declaration``), a key or an environment variable
/// that no declared setting covers, or a setting's former name.
///
/// A snapshot lists its warnings (``EnvironmentSnapshot/warnings``); the daemon writes each to
/// the journal with its own `MESSAGE_ID`, and `envctl check` and `show` print them. With
/// ``EnvironmentOptions/warningsAreErrors`` (or `envctl check --strict`), a warning fails the
/// load like an error.
public struct ConfigurationWarning: Sendable, Hashable, CustomStringConvertible {
    /// What kind of warning this is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A key written more than once in one dictionary of a file: the last copy is used.
        public static let duplicateKey = Code("duplicateKey")
        /// A key set in a file that no declared setting covers (``EnvironmentOptions/declaration``),
        /// or a top-level section spelled nearly like a reserved one or an environment: nothing
        /// reads it. The message suggests a declared key spelled nearly the same, if any.
        public static let unknownKey = Code("unknownKey")
        /// An environment variable with ``EnvironmentOptions/variablePrefix`` that sets a key no
        /// declared setting covers. The message suggests a variable for a declared key, if any.
        public static let unmatchedVariable = Code("unmatchedVariable")
        /// A key set under a former name of a declared setting: its value is used for the
        /// setting's key (unless that is set too), and the warning names it.
        public static let formerName = Code("formerName")
        /// A change that spans files (`envctl migrate`) is under way, or was interrupted: the
        /// files it names are read as they were before it (its journal, `.envctl-transaction` in the drop-in directory) until it is
        /// done. Never an error, even where warnings are: the configuration read is a whole one.
        public static let changeUnderWay = Code("changeUnderWay")

        /// The code's name, for example `duplicateKey`.
        public var description: String { name }
    }

    /// What kind of warning this is.
    public var code: Code
    /// What was found, in a sentence.
    public var message: String
    /// The key involved, if any (``SettingPath``'s text form).
    public var key: String?
    /// The file involved, if any.
    public var file: String?
    /// The line in ``file``, where known.
    public var line: Int?
    /// What to do about it.
    public var hint: String?

    /// Creates a warning.
    package init(
        _ code: Code, _ message: String, key: String? = nil, file: String? = nil, line: Int? = nil,
        hint: String? = nil
    ) {
        self.code = code
        self.message = message
        self.key = key
        self.file = file
        self.line = line
        self.hint = hint
    }

    /// One line: `file:line: message. hint`, with control characters escaped.
    public var description: String {
        var text = message
        if let file { text = (line.map { "\(file):\($0)" } ?? file) + ": " + text }
        if let hint { text = Sentences.joining(text, hint: hint) }
        return ControlCharacters.escaped(text)
    }
}
