package import Logging

/// The syslog priority levels that journald stores in `PRIORITY=` and reads from `<N>`
/// line prefixes.
package enum SyslogPriority: Int, Sendable, CaseIterable {
    /// 0: the system is unusable.
    case emergency = 0
    /// 1: action must be taken immediately.
    case alert = 1
    /// 2: critical conditions.
    case critical = 2
    /// 3: error conditions.
    case error = 3
    /// 4: warning conditions.
    case warning = 4
    /// 5: normal but significant conditions.
    case notice = 5
    /// 6: informational messages.
    case informational = 6
    /// 7: debug-level messages.
    case debug = 7

    /// The priority for a swift-log level: `trace` and `debug` 7, `info` 6, `notice` 5,
    /// `warning` 4, `error` 3, `critical` 2.
    ///
    /// - Parameter level: A swift-log level.
    package init(_ level: Logger.Level) {
        switch level {
        case .trace, .debug: self = .debug
        case .info: self = .informational
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
