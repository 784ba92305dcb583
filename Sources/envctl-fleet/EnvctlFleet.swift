#if Fleet
    import ArgumentParser
    import Environments
    import Foundation
    import TextEscaping

    /// `envctl-fleet`: the fleet's commands of envctl. `envctl publish …` and `envctl fleet …` run
    /// it (found beside envctl, else on `PATH`, as git and kubectl find their plugins), and
    /// `envctl show` and its kin run `envctl-fleet documents` for the fleet's documents when etcd
    /// options are given. It is built with the package trait Fleet (the Debian package
    /// `environments-fleet`), so that envctl itself links no etcd client.
    @main
    struct EnvctlFleet: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "envctl-fleet",
            abstract: "The fleet's commands of envctl: publish to etcd, and ask a fleet what its hosts run.",
            discussion: """
                Run as envctl publish … and envctl fleet status …; envctl finds this program beside itself or on \
                PATH. Every command takes the etcd options (--etcd-endpoints, --etcd-prefix, TLS and a user), \
                each with its $ENVIRONMENTS_ETCD_* variable.
                """,
            version: LibraryVersion.current,
            subcommands: [Publish.self, FleetStatusCommand.self, Documents.self]
        )

        /// Parses the command line and runs the subcommand, as envctl does: a ``Failure`` is one
        /// line on stderr (`envctl: …`) and exit status 1.
        static func main() {
            do {
                var command = try parseAsRoot()
                try command.run()
            } catch let failure as Failure {
                printError(failure.description)
                exit(withError: ExitCode(1))
            } catch {
                exit(withError: error)
            }
        }
    }

    /// A failure reported on stderr with exit status 1.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ message: String) { description = message }
    }

    /// Prints `message` on stderr after `envctl: ` (the command the operator typed), on one line,
    /// its control characters escaped.
    func printError(_ message: String) {
        FileHandle.standardError.write(Data(("envctl: " + ControlCharacters.escaped(message) + "\n").utf8))
    }

    /// Prints one line on stdout with its control characters escaped.
    func printLine(_ line: String) {
        print(ControlCharacters.escaped(line))
    }
#endif
