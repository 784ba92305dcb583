import UnixSignals

/// `SIGHUP`, trapped as early as possible.
///
/// The default action of `SIGHUP` ends the process, so a `systemctl reload` that arrives
/// while a daemon is still starting would kill it. Create this first thing in `main`,
/// before loading configuration, and hand it to ``EnvironmentService``: signals that arrive
/// before the service runs are kept and handled once it does.
public struct ReloadSignals: Sendable {
    let sequence: UnixSignalsSequence

    /// Traps `SIGHUP` now.
    public static func trap() async -> ReloadSignals {
        ReloadSignals(sequence: await UnixSignalsSequence(trapping: .sighup))
    }
}
