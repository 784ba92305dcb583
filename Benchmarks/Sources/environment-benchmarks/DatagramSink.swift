import BenchmarkFixtures
import Foundation

/// A unix datagram socket that reads and discards everything sent to it: a stand-in for
/// journald's socket, so that the daemon's journal entries cost what they cost in production.
final class DatagramSink: @unchecked Sendable {
    let path: String
    private let descriptor: Int32
    private let done = DispatchSemaphore(value: 0)

    init(directory: String) throws {
        path = directory + "/journal.socket"
        unlink(path)
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchmarkError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8.prefix(buffer.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw BenchmarkError("bind \(path): \(String(cString: strerror(errno)))") }
        let thread = Thread { [descriptor, done] in
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let received = recv(descriptor, &buffer, buffer.count, 0)
                if received > 0 || (received < 0 && errno == EINTR) { continue }
                break  // shut down (0) or closed
            }
            done.signal()
        }
        thread.start()
    }

    /// Closes the socket and ends the reading thread.
    func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
        _ = done.wait(timeout: .now() + 1)
        unlink(path)
    }
}
