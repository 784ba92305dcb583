package import Logging
import Synchronization

/// What a logger was asked to log, kept in memory for a test to read, as swift-log's own tests
/// do: `Logger(label: "test") { _ in log.handler() }`.
package final class KeptLog: Sendable {
    /// One logged entry.
    package typealias Entry = (level: Logger.Level, message: String, metadata: Logger.Metadata)

    private let kept = Mutex<[Entry]>([])

    /// An empty log; give its ``handler(logLevel:)`` to each logger whose entries it should keep.
    package init() {}

    /// Every entry so far, oldest first.
    package var all: [Entry] { kept.withLock { $0 } }

    /// How many entries so far satisfy `predicate`.
    package func count(where predicate: (Entry) -> Bool) -> Int { all.filter(predicate).count }

    /// A handler that keeps here what it is asked to log at `logLevel` and above (the entry's own
    /// metadata, not the logger's).
    package func handler(logLevel: Logger.Level = .trace) -> some LogHandler {
        Handler(target: self, logLevel: logLevel)
    }

    private struct Handler: LogHandler {
        let target: KeptLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            target.kept.withLock { $0.append((event.level, event.message.description, event.metadata ?? [:])) }
        }
    }
}
