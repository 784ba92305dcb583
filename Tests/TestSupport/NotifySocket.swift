import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A unix datagram socket bound where a daemon's `NOTIFY_SOCKET` points, collecting the
/// datagrams sd_notify sends.
package final class NotifySocket: @unchecked Sendable {
    /// The socket's path: the value for `NOTIFY_SOCKET`.
    package let path: String
    private let descriptor: Int32

    /// Binds a new socket at `path`, which must not exist yet; the socket is closed when this
    /// object is freed, and the file is left for the caller to remove.
    ///
    /// - Parameter path: Where to bind it; at most 107 bytes, the limit of `sockaddr_un`
    ///   (a longer path is cut short).
    /// - Throws: `POSIXError` with `bind(2)`'s `errno`, or `EIO` when no socket can be made.
    package init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close(descriptor) }

    /// The next datagram, or `nil` after `timeout`.
    package func receive(timeout: Duration) -> String? {
        if !drained.isEmpty { return drained.removeFirst() }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&poller, 1, milliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Datagrams taken off the socket by ``drain()`` and not yet received.
    private var drained: [String] = []

    /// Takes every datagram waiting off the socket (``receive(timeout:)`` still returns them,
    /// in order), as systemd does, so that a daemon sending more than the socket's queue holds
    /// (`net.unix.max_dgram_qlen`, 10 by default) does not block in `sd_notify`.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { return }
            drained.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }

    /// Datagrams until one satisfies `predicate` (returned), or `nil` after `timeout`.
    /// Every datagram received on the way is appended to `seen`.
    package func waitFor(
        timeout: Duration = .seconds(20), seen: inout [String], _ predicate: (String) -> Bool
    ) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let datagram = receive(timeout: deadline - ContinuousClock.now) else { return nil }
            seen.append(datagram)
            if predicate(datagram) { return datagram }
        }
        return nil
    }
}
