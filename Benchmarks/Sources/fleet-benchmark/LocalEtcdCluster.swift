import EtcdFleetClient
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A local etcd cluster (`/usr/bin/etcd`, 3.4) on loopback ports chosen free, in a temporary
/// directory, as the fleet tests start one: started, then killed and removed by ``stop()``.
final class LocalEtcdCluster: @unchecked Sendable {
    private struct Member {
        var name: String
        var clientPort: Int
        var peerPort: Int
        var process: Process?
        var endpoint: String { "http://127.0.0.1:\(clientPort)" }
        var peerURL: String { "http://127.0.0.1:\(peerPort)" }
    }

    /// The temporary directory: the members' data, their log, the benchmark's host directories.
    let root: URL
    private let lock = NSLock()
    private var members: [Member]
    private let logFile: URL

    /// Every member's client URL.
    var endpoints: [String] { lock.withLock { members.map(\.endpoint) } }

    /// Whether the `etcd` binary is installed (`apt-get install etcd-server`).
    static let binary = "/usr/bin/etcd"

    /// Starts `size` members and waits until the cluster answers.
    init(size: Int) async throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "fleet-benchmark-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        logFile = root.appendingPathComponent("etcd.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        var ports = try Self.freePorts(size * 2)
        members = (1...size).map { index in
            Member(name: "m\(index)", clientPort: ports.removeFirst(), peerPort: ports.removeFirst())
        }
        do {
            for index in members.indices { try launch(index) }
            try await waitUntilAnswering()
        } catch {
            stop()
            throw error
        }
    }

    /// Kills every member (SIGKILL: children inherit the blocked SIGTERM) and removes the
    /// directory. Safe to call more than once, and from a signal handler's queue.
    func stop() {
        let processes = lock.withLock {
            let processes = members.compactMap(\.process)
            for index in members.indices { members[index].process = nil }
            return processes
        }
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// The members' log, for failure messages.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private func launch(_ index: Int) throws {
        let member = members[index]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--name", member.name, "--data-dir", root.appendingPathComponent(member.name).path,
            "--listen-client-urls", member.endpoint, "--advertise-client-urls", member.endpoint,
            "--listen-peer-urls", member.peerURL, "--initial-advertise-peer-urls", member.peerURL,
            "--initial-cluster", members.map { "\($0.name)=\($0.peerURL)" }.joined(separator: ","),
            "--initial-cluster-state", "new", "--initial-cluster-token", root.lastPathComponent,
            "--heartbeat-interval", "50", "--election-timeout", "500", "--log-level", "warn",
        ]
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        lock.withLock { members[index].process = process }
    }

    /// Waits until a read succeeds on some member (a leader is elected).
    private func waitUntilAnswering(timeout: Duration = .seconds(30)) async throws {
        let client = try EtcdClient(
            configuration: EtcdConfiguration(endpoints: endpoints, prefix: "/"),
            logger: Logger(label: "fleet-benchmark", factory: { _ in SwiftLogNoOpLogHandler() }))
        defer { Task { await client.shutdown() } }
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if (try? await client.range(prefix: "/health-check/")) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchmarkFailure("no etcd member answered within \(timeout):\n\(log)")
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

/// A failure that makes the benchmark exit 1.
struct BenchmarkFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
