#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whom a ``VarlinkClient`` lets answer on its socket: checked on every connection, after
/// `connect(2)` and before the first byte of a call is sent, so that a process that only
/// listens where the daemon should is sent nothing.
///
/// The peer (`SO_PEERCRED`: the user of the process that listens) is trusted when its user is
/// one of:
///
/// - root, or the client's own effective user;
/// - one of ``additionalUsers`` (envctl's: the owners of the configuration directories it names
///   itself, `--config-dir`, `$CONFIGURATION_DIRECTORY`, `/etc/<app-name>`);
/// - the owner of the socket's directory, when that directory is a runtime directory that root
///   made for it: below `/run` (resolved) but not in a login's `/run/user/`, with every directory
///   above it owned by root and writable by root alone, and itself writable by its owner alone.
///   That is what systemd's `RuntimeDirectory=` gives a unit's user, `DynamicUser=` ones
///   included, whose user id is allocated at start: only root can give a user such a directory.
///
/// And the socket's directory is not writable by others (``DirectorySafety``): it belongs to
/// root, the client's user, a trusted user or the peer, and is writable by its owner alone;
/// each directory above it belongs to root, the client's user or a trusted user and is writable
/// by them alone, or is sticky (`/tmp`). Otherwise another user could put a socket there.
package struct PeerTrust: Sendable, Hashable {
    /// Users trusted besides root and the client's effective user.
    package var additionalUsers: Set<UInt32>

    /// Root, the client's effective user, and `additionalUsers`.
    package init(additionalUsers: Set<UInt32> = []) {
        self.additionalUsers = additionalUsers
    }

    /// Root, the client's effective user, and ``additionalUsers``.
    package var trustedUsers: Set<UInt32> { additionalUsers.union([0, geteuid()]) }

    /// Why the peer `peer` on the socket at `path` is not trusted, in a sentence that says what
    /// to do; `nil` when it is.
    package func refusal(of peer: PeerCredentials?, onSocket path: String) -> String? {
        guard let peer else {
            return
                "refusing the daemon on \(path): the kernel does not say which user listens there (SO_PEERCRED), so nothing was sent to it"
        }
        let directory = Self.directory(of: path)
        let trusted = trustedUsers
        if !trusted.contains(peer.uid), Self.runtimeDirectoryOwner(directory) != peer.uid {
            return
                "refusing the daemon on \(path): it runs as uid \(peer.uid) (process \(peer.pid)), which is not "
                + "\(DirectorySafety.names(trusted)), nor the owner of a runtime directory that root made for it "
                + "below /run (RuntimeDirectory=); nothing was sent to it. If it is the daemon you mean, run envctl as root "
                + "or as its user (uid \(peer.uid))"
        }
        let safety = DirectorySafety(
            owners: trusted.union([peer.uid]), ancestorOwners: trusted, allowsStickyAncestors: true)
        if let problem = safety.problem(with: directory) {
            return
                "refusing the daemon on \(path): \(problem), so another user could have put a socket there; "
                + "nothing was sent to it. Keep the control socket in a directory that only root or the daemon's user "
                + "can write (RuntimeDirectory=)"
        }
        return nil
    }

    /// The directory of the socket `path` (`.` for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// The owner of `directory` when it is a runtime directory that root made for that user
    /// (see ``PeerTrust``), else `nil`.
    static func runtimeDirectoryOwner(_ directory: String) -> UInt32? {
        guard let resolved = DirectorySafety.realPath(directory), resolved.hasPrefix("/run/"),
            resolved != "/run/user", !resolved.hasPrefix("/run/user/")
        else { return nil }
        var status = stat()
        guard stat(resolved, &status) == 0 else { return nil }
        let madeByRoot = DirectorySafety(owners: [status.st_uid], ancestorOwners: [0], allowsStickyAncestors: false)
        return madeByRoot.problem(with: resolved) == nil ? status.st_uid : nil
    }
}
