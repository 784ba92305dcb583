#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether a directory, and every directory above it, can be changed only by users one trusts:
/// a path in which nobody else can put, rename or remove an entry.
///
/// The directory is resolved first (`realpath(3)`), and each directory of the resolved path is
/// checked, from `/` down:
///
/// - each is owned by one of the trusted users (the directory itself by one of ``owners``, the
///   ones above it by one of ``ancestorOwners``);
/// - none is writable by others: not by every user (`o+w`), not by a group other than root's
///   (`g+w` with a group other than 0). A directory above it that every user may write is
///   accepted when it has the sticky bit (`/tmp`: nobody can rename or remove another's
///   entries) and ``allowsStickyAncestors``; the directory itself never.
///
/// Access control lists are not read: a directory that an ACL alone opens to others passes.
package struct DirectorySafety: Sendable, Hashable {
    /// The users the directory itself may belong to.
    package var owners: Set<UInt32>
    /// The users each directory above it may belong to.
    package var ancestorOwners: Set<UInt32>
    /// Whether a directory above it may be writable by others when it has the sticky bit.
    package var allowsStickyAncestors: Bool

    package init(owners: Set<UInt32>, ancestorOwners: Set<UInt32>, allowsStickyAncestors: Bool) {
        self.owners = owners
        self.ancestorOwners = ancestorOwners
        self.allowsStickyAncestors = allowsStickyAncestors
    }

    /// What makes `directory` unsafe, in a clause (`/tmp/x is writable by every user (mode
    /// 0777)`), or `nil` when it is safe.
    package func problem(with directory: String) -> String? {
        guard let resolved = Self.realPath(directory) else {
            return "\(directory) cannot be resolved (\(String(cString: strerror(errno))))"
        }
        var status = stat()
        guard stat(resolved, &status) == 0 else {
            return "\(resolved) cannot be examined (\(String(cString: strerror(errno))))"
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "\(resolved) is not a directory" }
        let ancestors = Self.ancestors(of: resolved)
        for ancestor in ancestors {
            var above = stat()
            guard stat(ancestor, &above) == 0 else {
                return "\(ancestor) cannot be examined (\(String(cString: strerror(errno))))"
            }
            if let problem = Self.problem(ancestor, above, owners: ancestorOwners, allowsSticky: allowsStickyAncestors)
            {
                return problem
            }
        }
        return Self.problem(resolved, status, owners: owners, allowsSticky: false)
    }

    /// `/`, `/a`, `/a/b` for `/a/b/c`: the directories above an absolute, resolved path.
    static func ancestors(of path: String) -> [String] {
        let components = path.split(separator: "/")
        var result = ["/"]
        var current = ""
        for component in components.dropLast() {
            current += "/" + component
            result.append(current)
        }
        return path == "/" ? [] : result
    }

    private static func problem(_ path: String, _ status: stat, owners: Set<UInt32>, allowsSticky: Bool) -> String? {
        let mode = UInt32(status.st_mode)
        let octal = "mode " + String(mode & 0o7777, radix: 8).leftPadded(to: 4)
        if !owners.contains(status.st_uid) {
            return "\(path) is owned by uid \(status.st_uid), not by \(Self.names(owners))"
        }
        let byEveryone = mode & UInt32(S_IWOTH) != 0
        let byGroup = mode & UInt32(S_IWGRP) != 0 && status.st_gid != 0
        let sticky = mode & UInt32(S_ISVTX) != 0
        if (byEveryone || byGroup) && !(allowsSticky && sticky) {
            let who = byEveryone ? "every user" : "group \(status.st_gid)"
            return "\(path) is writable by \(who) (\(octal))"
        }
        return nil
    }

    /// `root or uid 1000`.
    package static func names(_ users: Set<UInt32>) -> String {
        users.sorted().map { $0 == 0 ? "root" : "uid \($0)" }.joined(separator: " or ")
    }

    /// `realpath(3)` of `path`, or `nil` when it does not resolve.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
