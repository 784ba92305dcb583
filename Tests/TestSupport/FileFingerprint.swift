package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file's bytes, mode, owner and group, read without following a symbolic link: what must
/// not change about a file that a refused or hostile write left alone.
package struct FileFingerprint: Equatable, Sendable {
    /// The file's bytes.
    package var contents: Data
    /// Its type and permission bits (`st_mode`).
    package var mode: mode_t
    /// Its owner's user ID.
    package var owner: uid_t
    /// Its group's ID.
    package var group: gid_t

    /// Reads the fingerprint of the file at `path` (`lstat(2)`, then its bytes).
    package init(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw POSIXError(.ENOENT) }
        contents = try Data(contentsOf: URL(fileURLWithPath: path))
        mode = status.st_mode
        owner = status.st_uid
        group = status.st_gid
    }
}
