import CEarlySignals
import UnixSignals

/// `SIGHUP`, trapped from the very start of the process.
///
/// The default action of `SIGHUP` ends the process, so a `systemctl reload` that arrives
/// while a daemon is still starting would kill it. On Linux, linking `EnvironmentsDaemon`
/// installs a handler before `main` runs (a C constructor) that only counts such signals.
/// Create this early in `main` and hand it to ``EnvironmentService``: it takes over `SIGHUP`,
/// and the service reloads once it is ready if a signal arrived before.
public struct ReloadSignals: Sendable {
    let sequence: UnixSignalsSequence

    /// Traps `SIGHUP` now.
    public static func trap() async -> ReloadSignals {
        ReloadSignals(sequence: await UnixSignalsSequence(trapping: .sighup))
    }

    /// Whether the handler that runs before `main` was installed (always `false` outside
    /// Linux, and when the process was started with `SIGHUP` ignored).
    package static var trappedBeforeMain: Bool { environments_early_sighup_handler_installed() != 0 }

    /// How many `SIGHUP`s arrived before ``trap()`` took over.
    package static var signalsBeforeTrap: Int { Int(environments_early_sighup_count()) }
}
