#if Fleet
    package import EtcdFleetClient
    package import Foundation
    package import Logging

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A real etcd cluster (Debian's `etcd`, 3.4) on loopback ports chosen free, in a temporary
    /// directory: started, killed and restarted member by member, removed at the end. The etcd
    /// tests use it (`fleet-benchmark`, in the Benchmarks package, starts a plainer one of its own).
    package final class EtcdCluster: @unchecked Sendable {
        /// One member: its name, ports and, while it runs, its process.
        package struct Member {
            package var name: String
            package var clientPort: Int
            package var peerPort: Int
            package var process: Process?
            /// `http://127.0.0.1:PORT`, or with TLS `https://HOST:PORT`.
            package var endpoint: String
            /// Where it listens for clients: always 127.0.0.1.
            package var listenURL: String
            package var peerURL: String { "http://127.0.0.1:\(peerPort)" }
        }

        /// TLS on the members' client URLs (peers talk plain HTTP on loopback), made with
        /// ``TestCertificates``.
        package struct TLS: Sendable {
            /// The members' certificate and key.
            package var certificate: String
            package var key: String
            /// With a CA, members require a client certificate it signed (`--client-cert-auth`).
            package var clientAuthority: String?
            /// The host name in the endpoints clients use: it must match the members' certificate.
            package var host: String
            /// What the cluster's own client (and etcdctl) presents and trusts.
            package var client: EtcdConfiguration.TLSFiles

            package init(
                certificate: String, key: String, clientAuthority: String?, host: String = "localhost",
                client: EtcdConfiguration.TLSFiles
            ) {
                self.certificate = certificate
                self.key = key
                self.clientAuthority = clientAuthority
                self.host = host
                self.client = client
            }
        }

        /// The temporary directory: the members' data and their log (callers may put more there).
        package let root: URL
        private let lock = NSLock()
        private var storedMembers: [Member]
        private let logFile: URL
        private let tls: TLS?
        /// root's password once ``enableAuthentication(rootPassword:)`` ran.
        private var rootPassword: String? {
            get { lock.withLock { storedRootPassword } }
            set { lock.withLock { storedRootPassword = newValue } }
        }
        private var storedRootPassword: String?

        /// The members, as they are now.
        package var members: [Member] { lock.withLock { storedMembers } }

        /// Every member's client URL.
        package var endpoints: [String] { members.map(\.endpoint) }

        /// The etcd binary (`apt-get install etcd-server`).
        package static let binary = "/usr/bin/etcd"

        /// Whether the `etcd` binary is installed.
        package static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binary) }

        /// Starts `size` members and waits until the cluster answers.
        ///
        /// - Parameters:
        ///   - tls: TLS on the client URLs, or `nil` for plain HTTP.
        ///   - waitsUntilAnswering: Whether to wait until a read succeeds (else until the client
        ///     ports take connections: for members whose certificate no client accepts).
        package init(size: Int = 3, tls: TLS? = nil, waitsUntilAnswering: Bool = true)
            async throws
        {
            self.tls = tls
            root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "etcd-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            logFile = root.appendingPathComponent("etcd.log")
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            storedMembers = []
            // A member that exits while the cluster starts most likely found a port taken after
            // `freePorts` checked it (by another test's cluster or connection): start again on
            // other ports, twice at most.
            for attempt in 1...3 {
                let ports = try Self.freePorts(size * 2)
                lock.withLock {
                    storedMembers = (0..<size).map { index in
                        let clientPort = ports[2 * index]
                        return Member(
                            name: "m\(index + 1)", clientPort: clientPort, peerPort: ports[2 * index + 1],
                            process: nil,
                            endpoint: tls.map { "https://\($0.host):\(clientPort)" }
                                ?? "http://127.0.0.1:\(clientPort)",
                            listenURL: "\(tls == nil ? "http" : "https")://127.0.0.1:\(clientPort)")
                    }
                }
                do {
                    for index in 0..<size { try launch(index, state: "new") }
                    if waitsUntilAnswering {
                        try await waitUntilAnswering()
                    } else {
                        try await waitUntilListening()
                    }
                    try checkNoMemberExited()
                    return
                } catch {
                    let memberExited = exitedMember() != nil
                    killAll()
                    guard memberExited, attempt < 3 else {
                        stop()
                        throw error
                    }
                    for member in members {
                        try? FileManager.default.removeItem(at: root.appendingPathComponent(member.name))
                    }
                }
            }
        }

        deinit {
            stop()
        }

        /// Kills every member and removes the directory. Safe to call more than once, and from a
        /// signal handler's queue.
        package func stop() {
            killAll()
            try? FileManager.default.removeItem(at: root)
        }

        /// Kills one member (SIGKILL: no goodbye to its peers or clients).
        package func kill(_ index: Int) {
            let process = lock.withLock { () -> Process? in
                defer { storedMembers[index].process = nil }
                return storedMembers[index].process
            }
            guard let process, process.isRunning else { return }
            // SIGKILL: children of the process inherit its blocked signals, SIGTERM among them.
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// Stops one member with SIGSTOP: its process and its connections stay, and nothing is
        /// answered on them until ``resume(_:)``. Pair every call with a `defer { resume(index) }`.
        package func pause(_ index: Int) {
            guard let process = members[index].process, process.isRunning else { return }
            Glibc.kill(process.processIdentifier, SIGSTOP)
        }

        /// Lets a member stopped by ``pause(_:)`` go on (SIGCONT).
        package func resume(_ index: Int) {
            guard let process = members[index].process, process.isRunning else { return }
            Glibc.kill(process.processIdentifier, SIGCONT)
        }

        /// Starts a killed member again on its data.
        package func restart(_ index: Int) throws {
            try launch(index, state: "existing")
        }

        /// Kills every member.
        package func killAll() {
            for index in members.indices { kill(index) }
        }

        /// Starts every killed member again and waits until the cluster answers.
        package func restartAll() async throws {
            for (index, member) in members.enumerated() where member.process == nil { try restart(index) }
            try await waitUntilAnswering()
        }

        /// A client for these members (all of them, or `endpoints`): with TLS, the cluster's client
        /// files; with authentication on, as root.
        package func client(endpoints: [String]? = nil, logger: Logger = Logger(label: "etcd-tests")) throws
            -> EtcdClient
        {
            try EtcdClient(
                configuration: EtcdConfiguration(
                    endpoints: endpoints ?? self.endpoints, prefix: "/", userName: rootPassword == nil ? nil : "root",
                    password: rootPassword, tls: tls?.client),
                logger: logger)
        }

        /// Turns etcd's authentication on, with `root` as the only user (`etcdctl user add`,
        /// `auth enable`); the cluster's own client authenticates as root from now on.
        package func enableAuthentication(rootPassword password: String) throws {
            try etcdctl(["user", "add", "root:\(password)"])
            try etcdctl(["user", "grant-role", "root", "root"])
            try etcdctl(["auth", "enable"])
            rootPassword = password
        }

        /// Makes etcd forget every token it gave (`etcdctl auth disable`, then `auth enable`): the
        /// next request that presents one is refused as an invalid auth token, as after the token's
        /// TTL (`--auth-token-ttl`), without a test waiting on etcd's clock and racing it.
        package func forgetTokens() throws {
            guard let password = rootPassword else { return }
            try etcdctl(["auth", "disable"])
            // `auth enable` goes without a user: with authentication off, etcd has none to check.
            rootPassword = nil
            defer { rootPassword = password }
            try etcdctl(["auth", "enable"])
        }

        /// Adds a user who may read and write the keys under `prefix`, and nothing else.
        package func addUser(_ name: String, password: String, prefix: String) throws {
            try etcdctl(["role", "add", name])
            try etcdctl(["role", "grant-permission", name, "--prefix=true", "readwrite", prefix])
            try etcdctl(["user", "add", "\(name):\(password)"])
            try etcdctl(["user", "grant-role", name, name])
        }

        /// Runs `etcdctl` against the running members (as root once authentication is on).
        package func etcdctl(_ arguments: [String]) throws {
            var options = ["--endpoints", members.filter { $0.process != nil }.map(\.endpoint).joined(separator: ",")]
            if let client = tls?.client {
                if let authority = client.certificateAuthority { options += ["--cacert", authority] }
                if let certificate = client.certificate { options += ["--cert", certificate] }
                if let key = client.privateKey { options += ["--key", key] }
            }
            if let rootPassword { options += ["--user", "root:\(rootPassword)"] }
            let (status, text) = try runTool("/usr/bin/etcdctl", options + arguments, environment: ["ETCDCTL_API": "3"])
            guard status == 0 else {
                throw EtcdError(operation: "etcdctl \(arguments.joined(separator: " "))", message: text)
            }
        }

        /// Compacts the key-value store up to `revision` (`etcdctl compaction --physical`).
        package func compact(_ revision: Int64) throws {
            try etcdctl(["compaction", "--physical", String(revision)])
        }

        /// How many calls of the gRPC method `method` (`Range`, `Watch`, `Status`, ...) the member
        /// at `index` has started, from its metrics (`grpc_server_started_total`; plain HTTP only).
        package func startedCalls(_ method: String, member index: Int) throws -> Int {
            let url = "http://127.0.0.1:\(members[index].clientPort)/metrics"
            let (status, text) = try runTool("/usr/bin/curl", ["-sf", url])
            guard status == 0 else {
                throw EtcdError(operation: "read \(url)", message: "curl exited with \(status): \(text)")
            }
            return text.split(separator: "\n").filter {
                $0.hasPrefix("grpc_server_started_total{") && $0.contains("grpc_method=\"\(method)\"")
            }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
        }

        /// The members' log, for failure messages.
        package var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

        private func launch(_ index: Int, state: String) throws {
            let all = members
            let member = all[index]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = [
                "--name", member.name, "--data-dir", root.appendingPathComponent(member.name).path,
                "--listen-client-urls", member.listenURL, "--advertise-client-urls", member.endpoint,
                "--listen-peer-urls", member.peerURL, "--initial-advertise-peer-urls", member.peerURL,
                "--initial-cluster", all.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ","),
                "--initial-cluster-state", state, "--initial-cluster-token", root.lastPathComponent,
                "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "warn",
                // Cheap password hashing: authentication tests add users.
                "--bcrypt-cost", "4",
                // A progress notification every second on an idle watch (etcd's default is 10
                // minutes): below half of every request timeout the tests use, as a fleet's
                // members should run.
                "--experimental-watch-progress-notify-interval", "1s",
            ]
            if let tls {
                process.arguments! += ["--cert-file", tls.certificate, "--key-file", tls.key]
                if let authority = tls.clientAuthority {
                    process.arguments! += ["--client-cert-auth", "--trusted-ca-file", authority]
                }
            }
            let log = try FileHandle(forWritingTo: logFile)
            log.seekToEndOfFile()
            process.standardOutput = log
            process.standardError = log
            try process.run()
            lock.withLock { storedMembers[index].process = process }
        }

        /// Waits until a read succeeds on some member (a leader is elected).
        private func waitUntilAnswering(timeout: Duration = .seconds(30)) async throws {
            let client = try self.client(
                logger: Logger(label: "etcd-cluster", factory: { _ in SwiftLogNoOpLogHandler() }))
            defer { Task { await client.shutdown() } }
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if (try? await client.range(prefix: "/health-check/")) != nil { return }
                try checkNoMemberExited()
                try await Task.sleep(for: .milliseconds(100))
            }
            throw EtcdError(
                operation: "start the local etcd cluster", message: "no member answered within \(timeout): \(log)")
        }

        /// Waits until every member's client port takes a TCP connection.
        private func waitUntilListening(timeout: Duration = .seconds(30)) async throws {
            let deadline = ContinuousClock.now + timeout
            for member in members {
                while !Self.takesConnections(member.clientPort) {
                    try checkNoMemberExited()
                    guard ContinuousClock.now < deadline else {
                        throw EtcdError(operation: "start the local etcd cluster", message: "no member listens: \(log)")
                    }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }

        package static func takesConnections(_ port: Int) -> Bool {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            return withLoopbackAddress(port) { connect(descriptor, $0, $1) == 0 }
        }

        /// Calls `body` with the address 127.0.0.1:`port` and its length.
        private static func withLoopbackAddress<Result>(
            _ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
        ) -> Result {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }

        /// A member started and not killed whose process has ended.
        private func exitedMember() -> Member? {
            members.first { member in member.process.map { !$0.isRunning } ?? false }
        }

        /// Throws, naming the member and its exit status, if a member has exited.
        private func checkNoMemberExited() throws {
            guard let member = exitedMember(), let process = member.process else { return }
            throw EtcdError(
                operation: "start the local etcd cluster",
                message: "member \(member.name) (client port \(member.clientPort), peer port \(member.peerPort)) "
                    + "exited with status \(process.terminationStatus): \(log)")
        }

        /// Ports nobody listens on now, noted and closed: chosen at random below the kernel's
        /// ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`). Binding to port 0 would pick
        /// from that range, where every outgoing connection (the tests' clients among them) takes
        /// its local port too, so one could take a member's port between this check and etcd's own
        /// bind.
        package static func freePorts(_ count: Int) throws -> [Int] {
            let ephemeralLow =
                (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
                .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32_768
            let candidates = 10_000..<max(ephemeralLow, 20_000)
            var ports: [Int] = []
            var sockets: [Int32] = []
            defer { sockets.forEach { close($0) } }
            var tries = 0
            while ports.count < count {
                tries += 1
                guard tries <= 10_000 else { throw POSIXError(.EADDRINUSE) }
                let port = Int.random(in: candidates)
                guard !ports.contains(port) else { continue }
                let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
                guard withLoopbackAddress(port, { bind(descriptor, $0, $1) == 0 }) else {
                    close(descriptor)
                    continue
                }
                sockets.append(descriptor)
                ports.append(port)
            }
            return ports
        }
    }
#endif
