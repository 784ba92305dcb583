#if Fleet
    package import Foundation

    #if canImport(Glibc)
        import Glibc
    #endif

    /// `etcd grpc-proxy start` in front of a test cluster's members (plain HTTP/2 on loopback):
    /// started, killed and started again on the same port, ended with the test.
    package final class EtcdGRPCProxy: @unchecked Sendable {
        /// `http://127.0.0.1:PORT`: the endpoint hosts list instead of the members'.
        package let endpoint: String
        private let port: Int
        private let members: [String]
        private let logFile: URL
        private let lock = NSLock()
        private var process: Process?

        /// Starts a proxy for `members` (client URLs), logging to `log`, and waits until it listens.
        package init(members: [String], log: URL) async throws {
            port = try EtcdCluster.freePorts(1)[0]
            endpoint = "http://127.0.0.1:\(port)"
            self.members = members
            logFile = log
            if !FileManager.default.fileExists(atPath: log.path) {
                _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            }
            try await start()
        }

        deinit {
            kill()
        }

        /// Starts the proxy (again) and waits until it takes connections.
        package func start() async throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: EtcdCluster.binary)
            process.arguments = [
                "grpc-proxy", "start", "--endpoints", members.joined(separator: ","), "--listen-addr",
                "127.0.0.1:\(port)",
            ]
            let log = try FileHandle(forWritingTo: logFile)
            log.seekToEndOfFile()
            process.standardOutput = log
            process.standardError = log
            try process.run()
            lock.withLock { self.process = process }
            let deadline = ContinuousClock.now + .seconds(30)
            while !EtcdCluster.takesConnections(port) {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    throw CocoaError(
                        .executableLoad,
                        userInfo: [NSLocalizedDescriptionKey: "etcd grpc-proxy on port \(port) did not start"])
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        /// Kills the proxy (SIGKILL: its clients' connections are reset).
        package func kill() {
            let process = lock.withLock { () -> Process? in
                defer { self.process = nil }
                return self.process
            }
            guard let process, process.isRunning else { return }
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
#endif
