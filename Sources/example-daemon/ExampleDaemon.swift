import ArgumentParser
import Environments
import ExampleDaemonKit

/// An example daemon: reads `APIBaseUrl` through `Environment.shared.fetch`, logs it at start
/// and after every applied reload, and stays live under systemd. `example-fleet-daemon` is the
/// same daemon with the fleet's configuration from etcd below the host's files.
@main
struct ExampleDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-daemon",
        abstract: "An example daemon that shows live per-environment configuration under systemd.",
        version: LibraryVersion.current)

    @OptionGroup var arguments: ExampleArguments

    func run() async throws {
        try await ExampleDaemonRun.run(arguments, build: .embedded)
    }
}
