public import Logging

extension JournalLogHandler {
    /// A factory for `LoggingSystem.bootstrap(_:)`.
    ///
    /// The output is resolved once and shared by every logger (one socket for
    /// ``Output/socket(_:)``, however many loggers there are). Every logger's level follows
    /// the configuration's `LogLevel` (which `EnvironmentService` applies at start and on every
    /// reload) unless the logger's own `logLevel` is set.
    ///
    /// ```swift
    /// LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "example-daemon"))
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: The `SYSLOG_IDENTIFIER`; the default is the program's name (the last path component of `argv[0]`).
    ///   - output: Where entries go; the default is ``Output/automatic()``.
    ///   - metadataProvider: An optional provider of contextual metadata for every logger.
    /// - Returns: A function that makes a handler for a label.
    public static func factory(
        identifier: String? = nil,
        output: Output = .automatic(),
        metadataProvider: Logger.MetadataProvider? = nil
    ) -> @Sendable (String) -> any LogHandler {
        factory(identifier: identifier, levelControl: .shared, output: output, metadataProvider: metadataProvider)
    }

    /// ``factory(identifier:output:metadataProvider:)`` with a level control of its own, for tests.
    package static func factory(
        identifier: String? = nil,
        levelControl: LogLevelControl,
        output: Output = .automatic(),
        metadataProvider: Logger.MetadataProvider? = nil
    ) -> @Sendable (String) -> any LogHandler {
        let sink = LogSink(output)
        return { label in
            JournalLogHandler(
                label: label, identifier: identifier, levelControl: levelControl, output: output,
                sink: sink, metadataProvider: metadataProvider)
        }
    }
}
