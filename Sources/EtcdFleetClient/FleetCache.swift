import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The last good fleet configuration on local disk, so that a daemon that starts while etcd
/// is unreachable starts from it.
///
/// One JSON file, `fleet-cache.json`, in the cache directory (`CacheDirectory=` or
/// `StateDirectory=`), written atomically (a temporary file renamed over it) and readable by
/// its owner only: fleet documents may hold secrets.
public struct FleetCache: Sendable {
    /// The file.
    public let path: String

    /// The cache in `directory`.
    public init(directory: String) {
        path = (directory as NSString).appendingPathComponent("fleet-cache.json")
    }

    /// The cached state, or `nil` if there is none or it is for another prefix.
    ///
    /// - Throws: ``EtcdError`` if the file exists but cannot be read or decoded.
    public func load(prefix: String) throws(EtcdError) -> FleetState? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            let state = try JSONDecoder().decode(FleetState.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            return state.prefix == prefix ? state : nil
        } catch {
            throw EtcdError(
                operation: "read the fleet cache", message: "\(path): \(error)",
                hint: "remove it; it is written again once etcd answers")
        }
    }

    /// Replaces the cached state with `state`.
    ///
    /// - Throws: ``EtcdError`` if the directory is not writable.
    public func store(_ state: FleetState) throws(EtcdError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = (directory as NSString).appendingPathComponent(".fleet-cache.json.\(getpid())")
        do {
            let data = try JSONEncoder().encode(state)
            guard
                FileManager.default.createFile(
                    atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteUnknown) }
            guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            unlink(temporary)
            throw EtcdError(
                operation: "write the fleet cache", message: "\(path): \(error)",
                hint: "give the service a writable CacheDirectory= or StateDirectory=")
        }
    }
}
