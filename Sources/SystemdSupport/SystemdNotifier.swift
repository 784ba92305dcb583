package import Logging

#if os(Linux)
    import CSystemd
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends service state notifications to systemd with `sd_notify(3)`.
///
/// Every method is a silent no-op when `NOTIFY_SOCKET` is not set (the process is not a
/// `Type=notify` service, or it runs outside systemd), and none of them throws: a failure
/// to send is logged at `debug` level at most.
///
/// ```swift
/// let notifier = SystemdNotifier()
/// notifier.ready(status: "Serving environment Production")
/// ```
///
/// On platforms other than Linux every method does nothing.
package struct SystemdNotifier: Sendable {
    private let logger: Logger?
    private let isEnabled: Bool

    /// Creates a notifier that logs failures through a logger labelled
    /// `SystemdSupport.SystemdNotifier`, created only when a failure happens.
    package init() {
        self.init(logger: nil, isEnabled: true)
    }

    /// Creates a notifier that logs failures at `debug` level through `logger`.
    ///
    /// - Parameter logger: The logger for the rare case that a notification cannot be sent.
    package init(logger: Logger) {
        self.init(logger: logger, isEnabled: true)
    }

    private init(logger: Logger?, isEnabled: Bool) {
        self.logger = logger
        self.isEnabled = isEnabled
    }

    /// A notifier that sends nothing, whatever `NOTIFY_SOCKET` says: for a service that runs
    /// inside another program's process (a test), where notifications are not its to send.
    package static let disabled = SystemdNotifier(logger: nil, isEnabled: false)

    /// Whether the service manager expects notifications: `NOTIFY_SOCKET` is set and not empty.
    package var isAvailable: Bool {
        guard isEnabled else { return false }
        guard let socket = getenv("NOTIFY_SOCKET") else { return false }
        return socket.pointee != 0
    }

    /// Tells systemd that start-up (or a reload) is finished: `READY=1`.
    ///
    /// - Parameter status: An optional `STATUS=` text sent in the same datagram.
    package func ready(status: String? = nil) {
        send([("READY", "1")] + Self.statusAssignment(status))
    }

    /// Tells systemd that the service is reloading its configuration.
    ///
    /// Sends `RELOADING=1` together with `MONOTONIC_USEC=` (the current `CLOCK_MONOTONIC`
    /// time in microseconds) in one datagram, as `Type=notify-reload` requires. Call
    /// ``ready(status:)`` when the reload is finished.
    ///
    /// - Parameter status: An optional `STATUS=` text sent in the same datagram.
    package func reloading(status: String? = nil) {
        let now = MonotonicClock.nowMicroseconds()
        send(
            [("RELOADING", "1"), ("MONOTONIC_USEC", String(now))] + Self.statusAssignment(status))
    }

    /// Tells systemd that the service is shutting down: `STOPPING=1`.
    ///
    /// - Parameter status: An optional `STATUS=` text sent in the same datagram.
    package func stopping(status: String? = nil) {
        send([("STOPPING", "1")] + Self.statusAssignment(status))
    }

    /// Sets the free-form status text shown by `systemctl status`: `STATUS=`.
    ///
    /// Newlines in `text` are replaced by spaces.
    ///
    /// - Parameter text: The status text.
    package func status(_ text: String) {
        send([("STATUS", text)])
    }

    /// Pings the service manager's watchdog: `WATCHDOG=1`.
    ///
    /// Use `Watchdog` (what `EnvironmentService` runs) to ping at the right interval.
    package func watchdogPing() {
        send([("WATCHDOG", "1")])
    }

    /// Sends any assignments in one datagram, in order, as `NAME=value` lines.
    ///
    /// A newline or NUL inside a value is replaced by a space, so a value can never start
    /// another assignment. An empty list sends nothing.
    ///
    /// - Parameter assignments: The `(NAME, value)` pairs, for example `[("MAINPID", "42")]`.
    package func send(_ assignments: [(String, String)]) {
        guard isEnabled, !assignments.isEmpty else { return }
        #if os(Linux)
            let message = NotifyMessage.encode(assignments)
            let result = sd_notify(0, message)
            if result < 0 {
                let reason = String(cString: strerror(-result))
                let names = assignments.map(\.0).joined(separator: ",")
                (logger ?? Logger(label: "SystemdSupport.SystemdNotifier")).debug(
                    "sd_notify failed: \(reason)",
                    metadata: ["assignments": "\(names)", "errno": "\(-result)"]
                )
            }
        #endif
    }

    /// The interval at which to ping the watchdog, or `nil` when the watchdog is not enabled
    /// for this process.
    ///
    /// Uses `sd_watchdog_enabled(3)`, which reads `WATCHDOG_USEC=` and checks that
    /// `WATCHDOG_PID=`, when set, is this process. The result is half of `WATCHDOG_USEC`, as
    /// systemd recommends. Always `nil` on platforms other than Linux.
    package static func watchdogInterval() -> Duration? {
        #if os(Linux)
            var microseconds: UInt64 = 0
            guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
            return .microseconds(microseconds / 2)
        #else
            return nil
        #endif
    }

    private static func statusAssignment(_ status: String?) -> [(String, String)] {
        status.map { [("STATUS", $0)] } ?? []
    }
}
