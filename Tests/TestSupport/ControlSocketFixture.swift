package import Environments
package import EnvironmentsControl
package import EnvironmentsDaemon
import Foundation
package import JSONText
import Logging
package import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// A configuration directory and a runtime directory for an `EnvironmentService` in the test
/// process and its control socket (world-readable, so another user's envctl can reach the socket).
package final class ControlSocketFixture: Sendable {
    /// The temporary directory, `/tmp/control-XXXXXXXX`, holding `etc` (the configuration),
    /// `run` (the socket) and `credentials` (`db-password`); removed when the fixture is freed.
    package let root: String
    /// The control socket's path, in `run`: where ``service(_:configure:)`` serves, and what
    /// `envctl --socket` and `call(_:_:_:)` are given.
    package var socket: String { root + "/run/configuration.varlink" }
    /// The configuration's `Environments.plist`, in `etc`.
    package var mainFile: String { root + "/etc/Environments.plist" }

    /// Makes the directories (mode 0755, so that another user reaches them), the credential
    /// `db-password` (`hunter2`) and the main file, ``plist(_:password:)`` with the greeting
    /// `hello`.
    ///
    /// - Throws: The error of a directory or file that cannot be made.
    package init() throws {
        root = "/tmp/control-\(UUID().uuidString.prefix(8))"
        for directory in ["etc", "run", "credentials"] {
            try FileManager.default.createDirectory(
                atPath: root + "/" + directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
        }
        try "hunter2".write(toFile: root + "/credentials/db-password", atomically: true, encoding: .utf8)
        try write(Self.plist("hello"))
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Replaces the main file with `text` in one step (a temporary file renamed over it), so a
    /// reload or a watcher never reads half of it.
    ///
    /// - Parameter text: The new file's contents, usually ``plist(_:password:)``.
    /// - Throws: The error of the write, or `POSIXError(.EIO)` when the rename fails.
    package func write(_ text: String) throws {
        try text.write(toFile: mainFile + ".tmp", atomically: false, encoding: .utf8)
        guard rename(mainFile + ".tmp", mainFile) == 0 else { throw POSIXError(.EIO) }
    }

    /// A new environment on the fixture's files: application `control-tests`, environment
    /// Production, credentials from `credentials`. Each call loads the files afresh.
    ///
    /// - Returns: The environment, not bootstrapped: `Environment.shared` is left alone.
    /// - Throws: The `EnvironmentError` of a configuration that does not load.
    package func environment() throws -> Environment {
        try Environment(
            options: EnvironmentOptions(
                applicationName: "control-tests", environment: "Production", configDirectory: root + "/etc",
                processEnvironment: ["CREDENTIALS_DIRECTORY": root + "/credentials"]))
    }

    /// A service for `environment` as a test runs it in its own process
    /// (`EnvironmentService.Configuration.inTest`): the control socket at ``socket``, no signals,
    /// no systemd notifications, no file watching. Run it with `whileRunning(_:)`, which stops it
    /// when the test's body returns.
    ///
    /// - Parameters:
    ///   - environment: The environment to serve, usually from ``environment()``.
    ///   - configure: Changes to the control socket's limits and timeouts before it starts.
    /// - Returns: The service, not started.
    package func service(
        _ environment: Environment, configure: (inout ControlSocketConfiguration) -> Void = { _ in }
    )
        -> EnvironmentService
    {
        var configuration = EnvironmentService.Configuration.inTest(controlSocket: socket)
        configure(&configuration.controlSocket)
        return EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: configuration,
            logger: Logger(label: "control-tests"))
    }

    /// The example configuration of these tests, with `greeting` and the database password.
    package static func plist(_ greeting: String, password: String = "${credential:db-password}")
        -> String
    {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>Common</key><dict>
          <key>Greeting</key><string>\(greeting)</string>
          <key>ListenPort</key><integer>8080</integer>
          <key>Database</key><dict><key>Password</key><string>\(password)</string></dict>
        </dict>
        <key>Production</key><dict/>
        <key>RestartRequired</key><array><string>ListenPort</string></array>
        </dict></plist>
        """
    }

    /// Calls one of the control interface's methods.
    package static func call(
        _ socket: String, _ method: ControlInterface.Method, _ parameters: [String: JSONValue] = [:]
    ) async throws -> VarlinkReply {
        try await call(socket, method.qualifiedName, parameters)
    }

    /// Calls `method` on `socket`, on a thread of its own.
    package static func call(_ socket: String, _ method: String, _ parameters: [String: JSONValue] = [:]) async throws
        -> VarlinkReply
    {
        try await onThread {
            try VarlinkClient(path: socket, timeout: .seconds(120)).call(
                VarlinkCall(method: method, parameters: parameters))
        }
    }
}
