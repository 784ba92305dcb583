import Varlink

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension PeerCredentials {
    /// Whether the peer may reload, check and see secrets: root, or the daemon's own user.
    var isPrivileged: Bool { uid == 0 || uid == geteuid() }
}
