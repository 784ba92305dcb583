#if Fleet
    import Environments

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    #if canImport(Glibc)
        import Glibc
    #endif

    /// The last good fleet configuration on local disk, so that a daemon that starts while etcd
    /// is unreachable starts from it.
    ///
    /// One JSON file, `fleet-cache.json`, in the cache directory (`CacheDirectory=` or
    /// `StateDirectory=`), written atomically (a temporary file renamed over it) and readable by
    /// its owner only: fleet documents may hold secrets.
    package struct FleetCache: Sendable {
        /// The file.
        package let path: String

        /// The cache in `directory`.
        package init(directory: String) {
            path = PathNames.join(directory, "fleet-cache.json")
        }

        /// The cached state, or `nil` if there is none or it is for another prefix.
        ///
        /// - Throws: ``EtcdError`` if the file exists but cannot be read or decoded.
        package func load(prefix: String) throws(EtcdError) -> FleetState? {
            guard FleetFiles.exists(path) else { return nil }
            do {
                let state = try JSONDecoder().decode(FleetState.self, from: Data(FleetFiles.bytes(path)))
                return state.prefix == prefix ? state : nil
            } catch {
                throw EtcdError(
                    operation: "read the fleet cache", message: "\(path): \(error)",
                    hint: "remove it; it is written again once etcd answers")
            }
        }

        /// Replaces the cached state with `state`: written to a temporary file of its own (owner
        /// only from the start), then renamed over the cache, so a reader never sees half a file.
        /// No `fsync`: after a power loss the cache may be older, never torn; etcd is the truth.
        ///
        /// - Throws: ``EtcdError`` if the directory is not writable.
        package func store(_ state: FleetState) throws(EtcdError) {
            do {
                try AtomicFile.replace(path, with: try JSONEncoder().encode(state), mode: 0o600)
            } catch {
                throw EtcdError(
                    operation: "write the fleet cache", message: "\(path): \(error)",
                    hint: "give the service a writable CacheDirectory= or StateDirectory=")
            }
        }
    }
#endif
