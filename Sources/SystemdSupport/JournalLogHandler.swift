import FileDescriptorWriting
public import Logging

/// A swift-log `LogHandler` for systemd services: structured journal entries, or
/// `<N>`-prefixed or readable lines on standard error.
///
/// Each entry carries `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`,
/// `CODE_LINE`, `CODE_FUNC`, `LOGGER_LABEL`, `LOGGER_LEVEL` (the swift-log level, since
/// `trace` and `debug` share priority 7) and `LOGGER_SOURCE` (the module), followed by
/// every metadata value (handler metadata, then the metadata provider's, then the log
/// call's; later ones win for equal keys). Metadata keys become valid journal field names
/// through `JournalFieldName.sanitize(_:)`; a key that would collide with one of the
/// fields above gets the prefix `META_`, so it never replaces them. A key may set other
/// journal fields such as `MESSAGE_ID` or `DOCUMENTATION`. An array value becomes one
/// field per element, so a name can repeat. An error passed to the log call is added as
/// `ERROR_MESSAGE` and `ERROR_TYPE`.
///
/// Every handler follows one shared level, which `EnvironmentService` sets from the
/// configuration's `LogLevel`, so a reload can change the level of every logger at once.
/// Setting `logger.logLevel` pins that one logger to a level instead.
///
/// ```swift
/// LoggingSystem.bootstrap(JournalLogHandler.factory())
/// ```
///
/// No entry is lost silently: if the journal or socket cannot take an entry, it is
/// written to standard error with a `<N>` prefix.
public struct JournalLogHandler: LogHandler {
    /// The logger's label, sent as `LOGGER_LABEL`.
    package let label: String

    /// The `SYSLOG_IDENTIFIER` of every entry.
    package let identifier: String

    /// Where entries go.
    package let output: Output

    /// The control whose level applies unless `logLevel` was set on this handler.
    package let levelControl: LogLevelControl

    /// Metadata added to every entry of this handler.
    public var metadata: Logger.Metadata = [:]

    /// Provides contextual metadata (for example from task locals) for every entry.
    public var metadataProvider: Logger.MetadataProvider?

    private var levelOverride: Logger.Level?
    private let sink: LogSink
    private let fallbackDescriptor: Int32

    /// Creates a handler.
    ///
    /// - Parameters:
    ///   - label: The logger's label.
    ///   - identifier: The `SYSLOG_IDENTIFIER`; the default is the program's name (the last path component of `argv[0]`).
    ///   - levelControl: The control that sets the level.
    ///   - output: Where entries go; the default is ``Output/automatic()``.
    ///   - metadataProvider: An optional provider of contextual metadata.
    package init(
        label: String,
        identifier: String? = nil,
        levelControl: LogLevelControl = .shared,
        output: Output = .automatic(),
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.init(
            label: label, identifier: identifier, levelControl: levelControl, output: output,
            sink: LogSink(output), metadataProvider: metadataProvider)
    }

    /// Creates a handler that writes to an already resolved sink, and entries that the
    /// journal or socket does not take to `fallbackDescriptor`.
    init(
        label: String,
        identifier: String?,
        levelControl: LogLevelControl,
        output: Output,
        sink: LogSink,
        metadataProvider: Logger.MetadataProvider?,
        fallbackDescriptor: Int32 = FileDescriptorWriter.standardError
    ) {
        self.label = label
        self.identifier = identifier ?? Self.defaultIdentifier
        self.levelControl = levelControl
        self.output = output
        self.sink = sink
        self.metadataProvider = metadataProvider
        self.fallbackDescriptor = fallbackDescriptor
    }

    /// The program's name (the last path component of `argv[0]`), the default identifier.
    package static var defaultIdentifier: String {
        let name = CommandLine.arguments.first?.split(separator: "/").last.map(String.init)
        return name ?? "swift"
    }

    /// The level of this handler: the level set through this property if any, else the
    /// level of `levelControl` at the time of reading.
    public var logLevel: Logger.Level {
        get { levelOverride ?? levelControl.level }
        set { levelOverride = newValue }
    }

    /// Reads or changes one key of ``metadata``.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one entry to `output`.
    ///
    /// - Parameter event: The entry's level, message, metadata, error and source location.
    public func log(event: LogEvent) {
        let metadata = effectiveMetadata(for: event)
        switch sink {
        case .journal:
            if !Journal.send(journalEntry(for: event, metadata: metadata)) {
                writeFallback(event, metadata: metadata)
            }
        case .socket(let sender):
            if !sender.send(journalEntry(for: event, metadata: metadata)) {
                writeFallback(event, metadata: metadata)
            }
        case .prefixedLines(let descriptor):
            FileDescriptorWriter.write(
                LogLineFormatter.prefixed(
                    priority: SyslogPriority(event.level), message: event.message.description,
                    metadata: metadata),
                to: descriptor)
        case .plainLines(let descriptor, let oneLinePerEntry):
            FileDescriptorWriter.write(
                LogLineFormatter.plain(
                    timestamp: LogTimestamp.now(), level: event.level, label: label,
                    message: event.message.description, metadata: metadata, oneLinePerEntry: oneLinePerEntry),
                to: descriptor)
        }
    }

    /// Writes an entry that the journal or socket did not take to standard error (or the
    /// fallback descriptor given in tests).
    private func writeFallback(_ event: LogEvent, metadata: Logger.Metadata) {
        FileDescriptorWriter.write(
            LogLineFormatter.prefixed(
                priority: SyslogPriority(event.level), message: event.message.description,
                metadata: metadata),
            to: fallbackDescriptor)
    }

    /// Handler metadata, then the provider's, then the call's, then the error.
    private func effectiveMetadata(for event: LogEvent) -> Logger.Metadata {
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, new in new }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, new in new }
        }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        return merged
    }
}
