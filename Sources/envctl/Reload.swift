import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reload a running daemon and wait for its verdict, for ExecReload=.",
        discussion: """
            Calls Reload on the daemon's control socket: the daemon reads, validates and applies the \
            configuration and answers with the verdict. Exits 0 when it was applied or unchanged, 1 with \
            the reason when the daemon rejected it (and keeps its last good configuration). Use as
              ExecReload=/usr/local/bin/envctl reload --pid $MAINPID
            with RuntimeDirectory= set in the unit. It takes the options that name a daemon (--pid, \
            --app-name, --instance, --socket, --timeout); the ones that choose files to read are refused.
            """)

    @OptionGroup var location: LocationOptions

    /// A reload asks a running daemon, which reads its own files: the options that choose files
    /// to read are refused before anything is asked, with what to use instead.
    func validate() throws {
        var given: [String] = []
        if location.configDirectory != nil { given.append("--config-dir") }
        if location.environment != nil { given.append("--environment") }
        if !FleetTool.commandLine.etcd.isEmpty { given.append("--etcd-*") }
        guard given.isEmpty else {
            throw ValidationError(
                "reload asks a running daemon (--pid, --app-name, --socket), which reads its own files and environment: "
                    + "\(given.joined(separator: ", ")) do not apply. To check files, run envctl check \(given.first!) ..."
            )
        }
    }

    func run() throws {
        guard case .daemon(let client) = try location.target(requireDaemon: true) else {
            throw Failure("no daemon to reload: pass --pid, --app-name or --socket")
        }
        let reply = try client.ask(.reload)
        guard let object = reply["verdict"]?.objectValue, let verdict = try? ReloadReport(verdict: object) else {
            throw Failure("the daemon's answer cannot be read")
        }
        switch verdict.verdict {
        case .applied, .loaded:
            // At most 20 keys: under `ExecReload=` this line goes to the journal, one line.
            let keys = verdict.changedKeys
            let changed =
                keys.isEmpty
                ? ""
                : "; changed: " + keys.prefix(20).joined(separator: ", ")
                    + (keys.count > 20 ? " and \(keys.count - 20) more (envctl history lists them)" : "")
            printLine("reloaded: environment \(verdict.environment), generation \(verdict.generation)\(changed)")
        case .unchanged:
            printLine("reloaded: configuration unchanged, generation \(verdict.generation)")
        case .rejected, .abandoned:
            throw Failure("reload rejected by the daemon: \(verdict.error?.description ?? "no reason given")")
        }
    }
}
