import ArgumentParser
import Environments
import EnvironmentsControl
import Foundation

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Validate the configuration exactly as a reload would; exit non-zero with the reason if it is bad.",
        discussion: """
            Asking a running daemon, the daemon builds the configuration on disk with its own options and \
            its application's validation, without applying it. Reading files, envctl loads them itself.
            """)

    @OptionGroup var location: LocationOptions

    func run() throws {
        try reportingFailures {
            switch try location.target() {
            case .daemon(let client):
                let reply = try client.ask(ControlInterface.Method.check)
                guard let check = try? JSONValue.record(CheckReply.self, from: reply) else {
                    throw Failure("the daemon's answer cannot be read")
                }
                var summary = "OK: environment \(check.environment); a reload would "
                summary +=
                    check.changedKeys.isEmpty
                    ? "change nothing" : "change \(check.changedKeys.joined(separator: ", "))"
                if !check.pendingRestart.isEmpty {
                    summary += "; waiting for a restart: \(check.pendingRestart.joined(separator: ", "))"
                }
                printLine(summary)
            case .files:
                let snapshot = try location.load()
                var summary = "OK: environment \(snapshot.environmentName), \(snapshot.leafKeys.count) settings from "
                summary +=
                    snapshot.files.isEmpty ? "the built-in configuration" : snapshot.files.joined(separator: ", ")
                printLine(summary)
            }
        }
    }
}
