import ArgumentParser
import Environments
import EnvironmentsDaemon
import Foundation
import SystemdSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reload a running daemon synchronously, for ExecReload=: validate, signal, wait for its verdict.",
        discussion: """
            Checks the configuration with the daemon's own environment and directory (read from its \
            state file), exits 1 with the reason if it is invalid, else sends SIGHUP and waits until the \
            daemon reports that it applied or rejected the reload, and exits 0 or 1 accordingly. Use as
              ExecReload=/usr/bin/envctl reload --pid $MAINPID
            with RuntimeDirectory= set, so that the daemon writes $RUNTIME_DIRECTORY/environment-state.json.
            """)

    @OptionGroup var location: LocationOptions

    @Option(help: "The daemon's process id ($MAINPID in a unit file).")
    var pid: Int32

    @Option(help: "Seconds to wait for the daemon's verdict.")
    var timeout: Double = 30

    func run() throws {
        try reportingFailures {
            guard let statePath = location.statePath else {
                throw Failure(
                    "no state file to wait on: set RuntimeDirectory= in the unit (which sets $RUNTIME_DIRECTORY), or pass --state-file or --app-name"
                )
            }
            let options = location.options(state: location.daemonState(pid: pid))
            do {
                _ = try Environment(options: options)
            } catch {
                throw Failure("configuration rejected, daemon not signalled: \(error)")
            }
            let sentAt = MonotonicClock.nowMicroseconds()
            guard kill(pid, SIGHUP) == 0 else {
                throw Failure("cannot signal process \(pid): \(String(cString: strerror(errno)))")
            }
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let state = try? ReloadState.read(from: statePath), state.pid == pid,
                    let last = state.lastReload, last.startedMonotonicMicroseconds >= sentAt
                {
                    switch last.outcome {
                    case .applied:
                        let changed =
                            last.changedKeys.isEmpty ? "" : "; changed: " + last.changedKeys.joined(separator: ", ")
                        print("reloaded: environment \(state.environment), generation \(last.generation)\(changed)")
                        return
                    case .unchanged:
                        print("reloaded: configuration unchanged, generation \(last.generation)")
                        return
                    case .rejected:
                        throw Failure("reload rejected by the daemon: \(last.error ?? "unknown reason")")
                    }
                }
                usleep(10_000)
            }
            throw Failure("process \(pid) did not report a reload within \(timeout) s (state file \(statePath))")
        }
    }
}
