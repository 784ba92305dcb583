import EnvironmentsDaemon
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The SIGHUP handler that linking EnvironmentsDaemon installs before `main`, seen in this
/// test process (which links it too), before anything traps SIGHUP.
@Suite("SIGHUP before main", .blocking)
struct EarlySignalTests {
    @Test("a SIGHUP before ReloadSignals.trap() is counted, not fatal")
    func sighupBeforeTrapIsCounted() throws {
        var current = sigaction()
        sigaction(SIGHUP, nil, &current)
        let handler = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self)
        if handler == unsafeBitCast(SIG_IGN, to: Int.self) {
            // Started with SIGHUP ignored (nohup): the constructor leaves that alone.
            #expect(!ReloadSignals.trappedBeforeMain)
            return
        }
        try #require(ReloadSignals.trappedBeforeMain)
        let before = ReloadSignals.signalsBeforeTrap
        // To the process: whichever thread does not block SIGHUP runs the handler.
        kill(getpid(), SIGHUP)
        let deadline = ContinuousClock.now + .seconds(5)
        while ReloadSignals.signalsBeforeTrap == before, ContinuousClock.now < deadline { usleep(1_000) }
        // Still alive, and counted for the service to honour once it is ready.
        #expect(ReloadSignals.signalsBeforeTrap == before + 1)
    }
}
