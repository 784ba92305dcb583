import Foundation
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// `VarlinkClient` sends nothing to a socket in a directory that others can write (or that
/// lies below one), whoever listens there: real listening sockets in directories of each kind,
/// in this process (root's, so the peer's user is trusted and only the directory is in
/// question). The listener never accepts before the client is done: what the client sent is
/// what waits in the connection, and a refused client sent nothing.
@Suite("VarlinkClient sends nothing to a socket in a directory others can write", .serialized)
struct PeerTrustTests {
    /// The directories of a socket: below a new root-owned 0755 temporary directory.
    struct Layout: Sendable, CustomTestStringConvertible {
        var testDescription: String
        /// Owner and mode of the directory above the socket's, then of the socket's own.
        var parent: (owner: UInt32, group: UInt32, mode: mode_t)
        var directory: (owner: UInt32, group: UInt32, mode: mode_t)
        /// What the refusal says, or `nil` when the client is to send its call.
        var refusal: String?
    }

    static let layouts: [Layout] = [
        Layout(
            testDescription: "root's 0755 directories: sent", parent: (0, 0, 0o755), directory: (0, 0, 0o755),
            refusal: nil),
        Layout(
            testDescription: "a socket directory every user may write", parent: (0, 0, 0o755),
            directory: (0, 0, 0o777), refusal: "is writable by every user (mode 0777)"),
        Layout(
            testDescription: "a sticky socket directory every user may write", parent: (0, 0, 0o755),
            directory: (0, 0, 0o1777), refusal: "is writable by every user (mode 1777)"),
        Layout(
            testDescription: "a socket directory another group may write", parent: (0, 0, 0o755),
            directory: (0, 65534, 0o775), refusal: "is writable by group 65534 (mode 0775)"),
        Layout(
            testDescription: "a socket directory of another user", parent: (0, 0, 0o755),
            directory: (65534, 65534, 0o755), refusal: "is owned by uid 65534"),
        Layout(
            testDescription: "below a directory every user may write, without the sticky bit",
            parent: (0, 0, 0o777), directory: (0, 0, 0o755), refusal: "is writable by every user (mode 0777)"),
        Layout(
            testDescription: "below a sticky directory every user may write (as /tmp): sent", parent: (0, 0, 0o1777),
            directory: (0, 0, 0o755), refusal: nil),
        Layout(
            testDescription: "below a directory of another user", parent: (65534, 65534, 0o755),
            directory: (0, 0, 0o755), refusal: "is owned by uid 65534"),
    ]

    @Test(
        "a call is sent only to a socket whose directories only root or the client's user can change",
        .enabled(if: geteuid() == 0, "gives directories to another user"), arguments: layouts)
    func directories(_ layout: Layout) throws {
        let root = NSTemporaryDirectory() + "peer-trust-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let parent = root + "/parent"
        let directory = parent + "/run"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        #expect(chmod(root, 0o755) == 0)
        for (path, kind) in [(directory, layout.directory), (parent, layout.parent)] {
            #expect(chown(path, kind.owner, kind.group) == 0 && chmod(path, kind.mode) == 0)
        }
        let socket = directory + "/configuration.varlink"
        let listener = try Self.listening(at: socket)
        defer { close(listener) }

        let client = VarlinkClient(path: socket, timeout: .milliseconds(300))
        var failure = ""
        do {
            _ = try client.call(VarlinkCall(method: "org.example.Ping", parameters: [:]))
        } catch {
            failure = error.description
        }
        let received = try Self.acceptAndRead(listener)
        if let refusal = layout.refusal {
            #expect(failure.contains("refusing the daemon on \(socket)"), "\(failure)")
            #expect(failure.contains(refusal), "\(failure)")
            #expect(failure.contains("nothing was sent to it"), "\(failure)")
            #expect(received.isEmpty, "\(String(decoding: received, as: UTF8.self))")
        } else {
            // Nobody answers: the call times out, after it was sent.
            #expect(failure.contains("no answer"), "\(failure)")
            #expect(String(decoding: received, as: UTF8.self).contains("org.example.Ping"))
        }
    }

    /// A listening socket at `path`, never accepted until ``acceptAndRead(_:)``.
    static func listening(at path: String) throws -> Int32 {
        let descriptor = UnixSocket.makeStreamSocket()
        guard descriptor >= 0, var address = UnixSocket.address(path) else { throw POSIXError(.EINVAL) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(descriptor, 4) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRINUSE)
        }
        return descriptor
    }

    /// Accepts the client's connection (closed by now) and reads all it sent.
    static func acceptAndRead(_ listener: Int32) throws -> [UInt8] {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { throw POSIXError(.ECONNABORTED) }
        defer { close(connection) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            if count <= 0 { return received }
            received += buffer[..<count]
        }
    }
}
