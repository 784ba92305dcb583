package import Logging

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// A log level set at run time through `io.systemd.service.SetLogLevel` (what
/// `varlinkctl call SOCKET io.systemd.service.SetLogLevel '{"level":7}'` sends): it wins over
/// the `LogLevel` setting until the daemon restarts, or until a `SetLogLevel` with a null level
/// removes it.
package struct LogLevelOverride: Sendable, Hashable {
    /// The level in force.
    package var level: Logger.Level
    /// The BSD syslog level that was asked for, 0 (emerg) to 7 (debug).
    package var syslogLevel: Int
    /// The caller's user ID.
    package var uid: UInt32
    /// When it was set.
    package var setAt: Date

    /// The override of `syslogLevel`, or `nil` when it is no syslog level (0 to 7).
    ///
    /// swift-log's levels for syslog's: emerg, alert and crit are `critical`; err `error`;
    /// warning, notice, info and debug the same. (`trace` has no syslog level.)
    package init?(syslogLevel: Int, uid: UInt32, setAt: Date = Date()) {
        let levels: [Logger.Level] = [.critical, .critical, .critical, .error, .warning, .notice, .info, .debug]
        guard levels.indices.contains(syslogLevel) else { return nil }
        self.level = levels[syslogLevel]
        self.syslogLevel = syslogLevel
        self.uid = uid
        self.setAt = setAt
    }
}
