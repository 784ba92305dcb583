#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Who is on the other end of a connection, as the kernel reports it (`SO_PEERCRED`).
struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    /// The credentials of the peer connected to `descriptor`, or `nil` if the kernel gives none.
    static func of(_ descriptor: Int32) -> PeerCredentials? {
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

    /// Whether the peer may reload, check and see secrets: root, or the daemon's own user.
    var isPrivileged: Bool { uid == 0 || uid == geteuid() }

    var description: String { "pid \(pid), uid \(uid)" }
}
