import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file's bytes, mode, owner and group, read without following a symbolic link: what must
/// not change about a file that a refused or hostile write left alone.
@_spi(Integrations) public struct FileFingerprint: Equatable, Sendable {
    /// The file's bytes.
    @_spi(Integrations) public var contents: Data
    /// Its type and permission bits (`st_mode`).
    @_spi(Integrations) public var mode: mode_t
    /// Its owner's user ID.
    @_spi(Integrations) public var owner: uid_t
    /// Its group's ID.
    @_spi(Integrations) public var group: gid_t

    /// Reads the fingerprint of the file at `path` (`lstat(2)`, then its bytes).
    @_spi(Integrations) public init(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw POSIXError(.ENOENT) }
        contents = try Data(contentsOf: URL(fileURLWithPath: path))
        mode = status.st_mode
        owner = status.st_uid
        group = status.st_gid
    }
}
