#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Who is on the other end of a connection, as the kernel reports it (`SO_PEERCRED`).
package struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32

    /// The credentials of the peer connected to `descriptor`, or `nil` if the kernel gives none.
    package static func of(_ descriptor: Int32) -> PeerCredentials? {
        #if os(Linux)
            // `struct ucred` (pid_t, uid_t, gid_t), which Glibc's Swift module does not export.
            var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
            var length = socklen_t(MemoryLayout.size(ofValue: credentials))
            guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
                length == MemoryLayout.size(ofValue: credentials)
            else { return nil }
            return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
        #else
            return nil
        #endif
    }

    package var description: String { "pid \(pid), uid \(uid)" }
}
