#if Fleet
    import EtcdFleetClient
    import Foundation
    import Logging
    import Locking

    #if canImport(Glibc)
        import Glibc
    #endif

    /// The benchmark's own etcd cluster: `size` members of Debian's `etcd` (`/usr/bin/etcd`, 3.4)
    /// on free loopback ports, plain HTTP, in a temporary directory, with `etcd grpc-proxy`
    /// processes in front of them on demand (``startProxy(member:)``); killed and removed by
    /// ``stop()``. (The package's tests have a fuller one, with TLS and users, which a package of
    /// its own cannot use.)
    final class LocalEtcdCluster: Sendable {
        /// One running member.
        struct Member: Sendable {
            var name: String
            var clientPort: Int
            var processIdentifier: Int32
            /// `http://127.0.0.1:PORT`.
            var endpoint: String { "http://127.0.0.1:\(clientPort)" }
        }

        /// The etcd binary (`apt-get install etcd-server`).
        static let binary = "/usr/bin/etcd"

        /// The temporary directory: the members' data and log (the benchmark puts its hosts there).
        let root: URL
        let members: [Member]
        private let processes: [Process]
        /// The proxies started, killed with the members.
        private let proxies = Locked<[Process]>([])

        /// Every member's client URL.
        var endpoints: [String] { members.map(\.endpoint) }

        /// Starts `size` members and returns once the cluster answers a read. Each member sends a
        /// progress notification on an idle watch that asks for them every `progressNotifyMilliseconds`
        /// (`--experimental-watch-progress-notify-interval`, as a fleet's members are set).
        init(size: Int, progressNotifyMilliseconds: Int) async throws {
            root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "fleet-benchmark-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            let log = root.appendingPathComponent("etcd.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let ports = try Self.freePorts(2 * size)
            let names = (1...size).map { "m\($0)" }
            let peers = names.indices.map { "http://127.0.0.1:\(ports[size + $0])" }
            let cluster = zip(names, peers).map { "\($0)=\($1)" }.joined(separator: ",")
            var processes: [Process] = []
            var members: [Member] = []
            for index in names.indices {
                let client = "http://127.0.0.1:\(ports[index])"
                let process = Process()
                process.executableURL = URL(fileURLWithPath: Self.binary)
                process.arguments = [
                    "--name", names[index], "--data-dir", root.appendingPathComponent(names[index]).path,
                    "--listen-client-urls", client, "--advertise-client-urls", client,
                    "--listen-peer-urls", peers[index], "--initial-advertise-peer-urls", peers[index],
                    "--initial-cluster", cluster, "--initial-cluster-state", "new",
                    "--initial-cluster-token", root.lastPathComponent,
                    "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "warn",
                    "--experimental-watch-progress-notify-interval",
                    "\(progressNotifyMilliseconds)ms",
                ]
                let output = try FileHandle(forWritingTo: log)
                process.standardOutput = output
                process.standardError = output
                do {
                    try process.run()
                } catch {
                    processes.forEach { $0.terminate() }
                    throw error
                }
                processes.append(process)
                members.append(
                    Member(name: names[index], clientPort: ports[index], processIdentifier: process.processIdentifier))
            }
            self.processes = processes
            self.members = members
            let deadline = ContinuousClock.now + .seconds(30)
            guard
                let configuration = try EtcdConfiguration.resolve(
                    endpoints: members[0].endpoint, prefix: "/health-check/")
            else { throw BenchmarkFailure("no endpoint") }
            let writer = try FleetBenchmarkSupport.Writer(configuration, logger: Logger(label: "fleet-benchmark"))
            defer { Task { await writer.shutdown() } }
            while (try? await writer.revisions()) == nil {
                guard ContinuousClock.now < deadline else {
                    stop()
                    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                    throw BenchmarkFailure("the local etcd cluster did not answer within 30 s: \(text.suffix(2000))")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        /// A running `etcd grpc-proxy`.
        struct Proxy: Sendable {
            var port: Int
            var processIdentifier: Int32
            /// `http://127.0.0.1:PORT`.
            var endpoint: String { "http://127.0.0.1:\(port)" }
        }

        /// Starts `etcd grpc-proxy start` on a free loopback port with `member` alone as its
        /// `--endpoints`, and returns once it takes connections.
        func startProxy(member: Int) async throws -> Proxy {
            let port = try Self.freePorts(1)[0]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = [
                "grpc-proxy", "start", "--endpoints", "127.0.0.1:\(members[member].clientPort)", "--listen-addr",
                "127.0.0.1:\(port)", "--data-dir", root.appendingPathComponent("proxy-\(port)").path,
            ]
            let log = try FileHandle(forWritingTo: root.appendingPathComponent("etcd.log"))
            log.seekToEndOfFile()
            process.standardOutput = log
            process.standardError = log
            try process.run()
            proxies.withLock { $0.append(process) }
            let proxy = Proxy(port: port, processIdentifier: process.processIdentifier)
            let deadline = ContinuousClock.now + .seconds(30)
            while !Self.takesConnections(port) {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    throw BenchmarkFailure("etcd grpc-proxy on port \(port) did not start")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            return proxy
        }

        /// Whether something listens on loopback `port`.
        private static func takesConnections(_ port: Int) -> Bool {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
        }

        /// Kills every member and proxy and removes the directory. Safe to call more than once, and
        /// from a signal handler's queue.
        func stop() {
            for process in proxies.withLock({ $0 }) + processes where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: root)
        }

        /// Ports nobody listens on now: each bound to port 0 and read back, all closed at the end.
        private static func freePorts(_ count: Int) throws -> [Int] {
            var sockets: [Int32] = []
            defer { sockets.forEach { close($0) } }
            return try (0..<count).map { _ in
                let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
                sockets.append(descriptor)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let bound = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
                    }
                }
                guard bound else { throw POSIXError(.EADDRINUSE) }
                return Int(UInt16(bigEndian: address.sin_port))
            }
        }
    }
#endif
