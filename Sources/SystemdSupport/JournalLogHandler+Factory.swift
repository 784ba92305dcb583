import Logging

extension JournalLogHandler {
    /// A factory for `LoggingSystem.bootstrap(_:)`.
    ///
    /// The output is resolved once and shared by every logger (one socket for
    /// ``Output/socket(_:)``, however many loggers there are).
    ///
    /// ```swift
    /// LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "example-daemon"))
    /// ```
    ///
    /// - Parameters:
    ///   - identifier: The `SYSLOG_IDENTIFIER`; the default is the program's name (the last path component of `argv[0]`).
    ///   - levelControl: The control that sets the level of every logger.
    ///   - output: Where entries go; the default is ``Output/automatic()``.
    ///   - metadataProvider: An optional provider of contextual metadata for every logger.
    /// - Returns: A function that makes a handler for a label.
    public static func factory(
        identifier: String? = nil,
        levelControl: LogLevelControl = .shared,
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

    /// A factory for `LoggingSystem.bootstrap(_:metadataProvider:)`, whose metadata
    /// provider every handler uses.
    ///
    /// - Parameters:
    ///   - identifier: The `SYSLOG_IDENTIFIER`; the default is the program's name (the last path component of `argv[0]`).
    ///   - levelControl: The control that sets the level of every logger.
    ///   - output: Where entries go; the default is ``Output/automatic()``.
    /// - Returns: A function that makes a handler for a label and a metadata provider.
    public static func metadataProviderFactory(
        identifier: String? = nil,
        levelControl: LogLevelControl = .shared,
        output: Output = .automatic()
    ) -> @Sendable (String, Logger.MetadataProvider?) -> any LogHandler {
        let sink = LogSink(output)
        return { label, metadataProvider in
            JournalLogHandler(
                label: label, identifier: identifier, levelControl: levelControl, output: output,
                sink: sink, metadataProvider: metadataProvider)
        }
    }
}
