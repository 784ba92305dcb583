#if Fleet
    import ArgumentParser
    import Environments
    import TextEscaping

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

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
        writeAll(STDERR_FILENO, Array(("envctl: " + ControlCharacters.escaped(message) + "\n").utf8))
    }

    /// Writes all of `bytes` to `descriptor` with write(2), as many calls as it takes (a pipe
    /// takes part of a large write); stops at an error, such as a reader that went away.
    func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }

    /// Prints one line on stdout with its control characters escaped.
    func printLine(_ line: String) {
        print(ControlCharacters.escaped(line))
    }
#endif
