import Logging

/// A change that was refused or failed, in a sentence: what is wrong, where (file and line when
/// known), and, when nothing was written, that nothing was. `envctl` prints it as
/// `envctl: …` and exits 1; ``ConfigurationEditor`` throws it as it is.
package struct Failure: Error, CustomStringConvertible, Sendable {
    /// The sentence.
    package var description: String

    package init(_ message: String) { description = message }
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
