#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sends journal entries in the native protocol to a unix datagram socket at a path.
///
/// Use it to write to a journal socket other than the default one (for example a
/// journald namespace's socket), or to receive entries on your own socket in tests. Each
/// entry is one datagram encoded by ``JournalNativeProtocol``. A path starting with `@`
/// names a socket in the abstract namespace.
///
/// The sender owns one unbound socket, closed when the sender is released; it may be used
/// from any number of threads. On platforms other than Linux nothing is sent.
package final class JournalSocketSender: Sendable {
    /// The path of the receiving socket.
    package let path: String

    private let descriptor: Int32

    /// Creates a sender for the socket at `path`.
    ///
    /// - Parameter path: The receiving socket's path, or `@name` for an abstract socket.
    package init(path: String) {
        self.path = path
        #if os(Linux)
            self.descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        #else
            self.descriptor = -1
        #endif
    }

    deinit {
        if descriptor >= 0 {
            close(descriptor)
        }
    }

    /// Sends one entry as one datagram.
    ///
    /// - Parameter entry: The entry to send.
    /// - Returns: `true` if the whole datagram was sent; `false` if no socket listens at
    ///   ``path``, the datagram is too large, or sending failed otherwise.
    @discardableResult
    package func send(_ entry: JournalEntry) -> Bool {
        send(datagram: JournalNativeProtocol.encode(entry))
    }

    /// Sends one entry made of `(name, value)` pairs; names are sanitized.
    ///
    /// - Parameter fields: The names and text values, in order; names may repeat.
    /// - Returns: `true` if the whole datagram was sent.
    @discardableResult
    package func send(_ fields: [(String, String)]) -> Bool {
        send(JournalEntry(fields))
    }

    /// Sends raw bytes as one datagram.
    ///
    /// - Parameter datagram: The bytes to send.
    /// - Returns: `true` if the whole datagram was sent.
    @discardableResult
    package func send(datagram: [UInt8]) -> Bool {
        #if os(Linux)
            guard descriptor >= 0 else { return false }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var pathBytes = Array(path.utf8)
            let isAbstract = pathBytes.first == UInt8(ascii: "@")
            if isAbstract {
                pathBytes[0] = 0
            }
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            guard !pathBytes.isEmpty, pathBytes.count < capacity else { return false }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
            let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
            let length = socklen_t(pathOffset + pathBytes.count + (isAbstract ? 0 : 1))
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                        var result: Int
                        repeat {
                            result = sendto(
                                descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL),
                                socketAddress, length)
                        } while result < 0 && errno == EINTR
                        return result
                    }
                }
            }
            return sent == datagram.count
        #else
            return false
        #endif
    }
}
