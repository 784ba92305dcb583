#if Fleet
    import EtcdTestSupport
    import Foundation
    import TestSupport

    #if canImport(Glibc)
        import Glibc
    #endif

    /// The example fleet daemon as a process of its own (for tests that kill or stop it), with its
    /// status under `host`, a status TTL of `ttl` seconds, and its output in `directory/daemon.log`.
    final class ExampleFleetDaemon: @unchecked Sendable {
        let process = Process()
        let logFile: URL
        private let output: FileHandle

        /// What the example daemon's declaration requires in Production, and `name` as `Database.Name`.
        static func document(name: String = "example") -> Data {
            Data(
                plistDocument(
                    """
                    <key>Common</key><dict><key>APIBaseUrl</key><string>https://api.example.com</string>\
                    <key>Database</key><dict><key>Name</key><string>\(name)</string></dict></dict>
                    <key>Production</key><dict><key>Database</key><dict>
                    <key>Password</key><string>not-a-real-password</string></dict></dict>
                    """
                ).utf8)
        }

        /// - Parameter environment: More variables (TLS files, a user: ``SecuredCluster/daemonEnvironment``).
        init(
            cluster: EtcdCluster, prefix: String, host: String, directory: URL, ttl: Int = 3,
            environment: [String: String] = [:]
        ) throws {
            process.executableURL = BuiltProducts.directory.appendingPathComponent("example-fleet-daemon")
            process.arguments = ["--config-dir", directory.path, "--environment", "Production"]
            let runtime = directory.appendingPathComponent("run-\(host)")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            process.environment = operatorEnvironment(
                [
                    "ENVIRONMENTS_ETCD_ENDPOINTS": cluster.endpoints.joined(separator: ","),
                    "ENVIRONMENTS_ETCD_PREFIX": prefix, "ENVIRONMENTS_ETCD_HOST_ID": host,
                    "ENVIRONMENTS_ETCD_STATUS_TTL": String(ttl),
                    // A runtime directory of its own: without one its control socket would be
                    // /run/example-daemon/configuration.varlink, which a SIGKILL leaves behind for every
                    // later `envctl --app-name example-daemon` on the machine to find.
                    "RUNTIME_DIRECTORY": runtime.path,
                ].merging(environment) { _, new in new })
            logFile = directory.appendingPathComponent("daemon-\(host).log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            output = try FileHandle(forWritingTo: logFile)
            process.standardOutput = output
            process.standardError = output
            try process.run()
        }

        /// The end of its output.
        var log: String {
            (try? String(contentsOf: logFile, encoding: .utf8)).map { String($0.suffix(2000)) } ?? ""
        }

        /// Kills it (SIGKILL, after a SIGCONT in case it was stopped) if it still runs.
        func kill() {
            if process.isRunning {
                Glibc.kill(process.processIdentifier, SIGCONT)
                Glibc.kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try? output.close()
        }
    }
#endif
