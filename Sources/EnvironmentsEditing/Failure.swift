package import Environments
import Logging

/// A change that was refused or failed, in a sentence: what is wrong, where (file and line when
/// known), and, when nothing was written, that nothing was. `envctl` prints it as
/// `envctl: …` and exits 1; ``ConfigurationEditor`` throws it as a ``ConfigurationEditError``
/// with its code and context.
package struct Failure: Error, CustomStringConvertible, Sendable {
    /// The sentence.
    package var description: String
    /// What kind of failure it is, for ``ConfigurationEditError``; `nil` for envctl's own
    /// (its command line, its daemon), which ``ConfigurationEditor`` never meets.
    package var code: ConfigurationEditError.Code?
    /// The key involved, if any.
    package var key: String?
    /// The environment whose configuration failed to load, if one did.
    package var environment: String?
    /// The file involved, if known.
    package var file: String?
    /// The line in ``file``, if known.
    package var line: Int?
    /// The load's error, when the configuration with the change failed to load.
    package var configurationError: EnvironmentError?

    package init(_ message: String) { description = message }

    /// A failure of the editing engine, with its code and what it concerns.
    package init(
        _ code: ConfigurationEditError.Code, _ message: String, key: String? = nil, file: String? = nil,
        line: Int? = nil
    ) {
        self.description = message
        self.code = code
        self.key = key
        self.file = file
        self.line = line
    }

    /// The failure of the configuration's load with a change, for `environment` (`nil`: not
    /// one environment's, as when the environments are listed), said as `prefix` and the
    /// error: its file's problem (``ConfigurationEditError/Code/malformedFile``,
    /// ``ConfigurationEditError/Code/fileUnreadable``) or the configuration's
    /// (``ConfigurationEditError/Code/invalidConfiguration``).
    package init(loading error: EnvironmentError, environment: String?, prefix: String = "") {
        let code: ConfigurationEditError.Code =
            switch error.code {
            case .malformedFile, .invalidRoot, .invalidSection, .invalidDropIn: .malformedFile
            case .fileUnreadable: .fileUnreadable
            default: .invalidConfiguration
            }
        self.init(code, prefix + "\(error)", key: error.key, file: error.file, line: error.line)
        self.environment = environment ?? error.environment
        self.configurationError = error
    }
}

/// Where the engine's notes go: that it waits for another change's lock, that an extended
/// attribute or an owner is not kept, that it completed a change a killed process left. Not
/// errors: the change goes on. `envctl` prints them on stderr; by default they are logged.
package typealias NoteSink = @Sendable (String) -> Void

/// The notes' default sink.
package enum EditingNotes {
    /// Logs a note at `notice` level (label `swift-environments.editing`).
    package static let log: NoteSink = { note in
        Logger(label: "swift-environments.editing").notice("\(note)")
    }
}
