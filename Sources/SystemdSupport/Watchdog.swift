/// Pings the systemd watchdog at a fixed interval until its task is cancelled.
///
/// ```swift
/// let watchdog = Watchdog()
/// let task = Task { await watchdog.run() }
/// // ...
/// task.cancel()
/// ```
package struct Watchdog: Sendable {
    /// The time between two pings, or `nil` when the watchdog is disabled.
    package let interval: Duration?

    /// The notifier that sends `WATCHDOG=1`.
    package let notifier: SystemdNotifier

    /// Creates a watchdog.
    ///
    /// - Parameters:
    ///   - notifier: The notifier that sends the pings.
    ///   - interval: The time between two pings. The default is
    ///     ``SystemdNotifier/watchdogInterval()``: half of `WATCHDOG_USEC`, or `nil` when
    ///     systemd does not watch this process.
    package init(
        notifier: SystemdNotifier = SystemdNotifier(),
        interval: Duration? = SystemdNotifier.watchdogInterval()
    ) {
        self.notifier = notifier
        self.interval = interval
    }

    /// Pings immediately, then once every ``interval``, until the current task is cancelled.
    ///
    /// Returns at once when ``interval`` is `nil` or not positive.
    package func run() async {
        guard let interval, interval > .zero else { return }
        while !Task.isCancelled {
            notifier.watchdogPing()
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
        }
    }
}
