package import Logging
import Synchronization

/// A log level shared by many loggers, changeable at any time from any thread.
///
/// ``JournalLogHandler`` reads its level from a control on every log call (unless the
/// logger's level was set directly), so a configuration reload changes the level of every
/// existing logger at once:
///
/// ```swift
/// LogLevelControl.shared.level = .debug
/// ```
package final class LogLevelControl: Sendable {
    /// The control used by default by ``JournalLogHandler``.
    package static let shared = LogLevelControl()

    private let storage: Atomic<UInt8>

    /// Creates a control.
    ///
    /// - Parameter level: The initial level.
    package init(level: Logger.Level = .info) {
        self.storage = Atomic(Self.code(for: level))
    }

    /// The current level; setting it takes effect for the next log call of every logger
    /// that follows this control.
    package var level: Logger.Level {
        get { Self.level(for: storage.load(ordering: .relaxed)) }
        set { storage.store(Self.code(for: newValue), ordering: .relaxed) }
    }

    private static let levels = Logger.Level.allCases

    private static func code(for level: Logger.Level) -> UInt8 {
        UInt8(levels.firstIndex(of: level) ?? 0)
    }

    private static func level(for code: UInt8) -> Logger.Level {
        Int(code) < levels.count ? levels[Int(code)] : .info
    }
}
