import EtcdFleetClient
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A real etcd cluster (Debian's `etcd`, 3.4) on loopback ports chosen free, in a temporary
/// directory: started, killed and restarted member by member, removed at the end.
final class EtcdCluster: @unchecked Sendable {
    struct Member {
        var name: String
        var clientPort: Int
        var peerPort: Int
        var process: Process?
        var endpoint: String { "http://127.0.0.1:\(clientPort)" }
        var peerURL: String { "http://127.0.0.1:\(peerPort)" }
    }

    let root: URL
    private(set) var members: [Member]
    private let logFile: URL

    /// Every member's client URL.
    var endpoints: [String] { members.map(\.endpoint) }

    /// Whether the `etcd` binary is installed (`apt-get install etcd-server`).
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/etcd") }

    /// Starts `size` members and waits until the cluster answers.
    init(size: Int = 3) async throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "etcd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        logFile = root.appendingPathComponent("etcd.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        var ports = try Self.freePorts(size * 2)
        members = (1...size).map { index in
            Member(name: "m\(index)", clientPort: ports.removeFirst(), peerPort: ports.removeFirst())
        }
        for index in members.indices { try launch(index, state: "new") }
        try await waitUntilAnswering()
    }

    deinit {
        for member in members { Self.kill(member.process) }
        try? FileManager.default.removeItem(at: root)
    }

    /// Kills one member (SIGKILL: no goodbye to its peers or clients).
    func kill(_ index: Int) {
        Self.kill(members[index].process)
        members[index].process = nil
    }

    /// Starts a killed member again on its data.
    func restart(_ index: Int) throws {
        try launch(index, state: "existing")
    }

    /// Kills every member.
    func killAll() {
        for index in members.indices { kill(index) }
    }

    /// Starts every killed member again and waits until the cluster answers.
    func restartAll() async throws {
        for index in members.indices where members[index].process == nil { try restart(index) }
        try await waitUntilAnswering()
    }

    /// A client for these members, writing as tests do.
    func client(endpoints: [String]? = nil) throws -> EtcdClient {
        try EtcdClient(
            configuration: EtcdConfiguration(endpoints: endpoints ?? self.endpoints, prefix: "/"),
            logger: Logger(label: "etcd-tests"))
    }

    /// Compacts the key-value store up to `revision` (`etcdctl compaction --physical`).
    func compact(_ revision: Int64) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/etcdctl")
        process.arguments = [
            "--endpoints", members.filter { $0.process != nil }.map(\.endpoint).joined(separator: ","), "compaction",
            "--physical", String(revision),
        ]
        process.environment = ["ETCDCTL_API": "3"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw POSIXError(.EIO) }
    }

    /// The members' log, for failure messages.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private func launch(_ index: Int, state: String) throws {
        let member = members[index]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/etcd")
        process.arguments = [
            "--name", member.name, "--data-dir", root.appendingPathComponent(member.name).path,
            "--listen-client-urls", member.endpoint, "--advertise-client-urls", member.endpoint,
            "--listen-peer-urls", member.peerURL, "--initial-advertise-peer-urls", member.peerURL,
            "--initial-cluster", members.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ","),
            "--initial-cluster-state", state, "--initial-cluster-token", root.lastPathComponent,
            "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "warn",
        ]
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        members[index].process = process
    }

    /// Waits until a read succeeds on some member (a leader is elected).
    private func waitUntilAnswering(timeout: Duration = .seconds(30)) async throws {
        let client = try self.client()
        defer { Task { await client.shutdown() } }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await client.range(prefix: "/health-check/")) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw EtcdError(operation: "start the test cluster", message: "no member answered within \(timeout): \(log)")
    }

    private static func kill(_ process: Process?) {
        guard let process, process.isRunning else { return }
        // SIGKILL: children of the test process inherit its blocked signals, SIGTERM among them.
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Ports nobody listens on now: bound to port 0, noted, closed.
    private static func freePorts(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        while ports.count < count {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
                }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            sockets.append(descriptor)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }
}
