import ArgumentParser
import Environments
import EnvironmentsControl
import Foundation

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reload a running daemon and wait for its verdict, for ExecReload=.",
        discussion: """
            Calls Reload on the daemon's control socket: the daemon reads, validates and applies the \
            configuration and answers with the verdict. Exits 0 when it was applied or unchanged, 1 with \
            the reason when the daemon rejected it (and keeps its last good configuration). Use as
              ExecReload=/usr/local/bin/envctl reload --pid $MAINPID
            with RuntimeDirectory= set in the unit.
            """)

    @OptionGroup var location: LocationOptions

    func run() throws {
        try reportingFailures {
            guard case .daemon(let client) = try location.target(requireDaemon: true) else {
                throw Failure("no daemon to reload: pass --pid, --app-name or --socket")
            }
            let reply = try client.ask(ControlInterface.Method.reload)
            guard let verdict = try? JSONValue.record(ReloadVerdictRecord.self, from: reply["verdict"]?.objectValue)
            else { throw Failure("the daemon's answer cannot be read") }
            switch verdict.outcome {
            case .applied:
                let changed =
                    verdict.changedKeys.isEmpty ? "" : "; changed: " + verdict.changedKeys.joined(separator: ", ")
                printLine("reloaded: environment \(verdict.environment), generation \(verdict.generation)\(changed)")
            case .unchanged:
                printLine("reloaded: configuration unchanged, generation \(verdict.generation)")
            case .rejected:
                throw Failure("reload rejected by the daemon: \(verdict.error?.description ?? "no reason given")")
            }
        }
    }
}
