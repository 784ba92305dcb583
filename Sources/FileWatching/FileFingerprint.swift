#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What polling compares to notice a change: identity, size and times of a path (following
/// symbolic links), and for directories the same for each entry.
struct FileFingerprint: Sendable, Hashable {
    /// Identity, size and times from `stat(2)`, or `nil` if the path does not resolve.
    var status: [Int64]?
    /// The entries' fingerprints by name, if the path is a listed directory.
    var entries: [String: FileFingerprint]?

    /// Fingerprints `path`; with `listing`, also every entry if it is a directory.
    init(path: String, listing: Bool) {
        status = Self.status(of: path)
        entries = nil
        if listing, let names = Self.entryNames(of: path) {
            var entries: [String: FileFingerprint] = [:]
            for name in names {
                entries[name] = FileFingerprint(path: path + "/" + name, listing: false)
            }
            self.entries = entries
        }
    }

    /// Every configured path's fingerprint, by its configured spelling; directories listed.
    static func all(of configuration: WatchConfiguration) -> [String: FileFingerprint] {
        var result: [String: FileFingerprint] = [:]
        for file in configuration.files {
            result[file.configured] = FileFingerprint(path: file.absolute, listing: false)
        }
        for directory in configuration.directories {
            var fingerprint = FileFingerprint(path: directory.absolute, listing: true)
            // The directory's identity, and the entries that matter: an editor's swap file
            // changes the directory's times, not the configuration.
            fingerprint.status = fingerprint.status.map { Array($0.prefix(3)) }
            fingerprint.entries = fingerprint.entries?.filter { configuration.entryFilter($0.key) }
            result[directory.configured] = fingerprint
        }
        return result
    }

    /// The paths whose fingerprints differ between `old` and `new`.
    static func changedPaths(from old: [String: FileFingerprint], to new: [String: FileFingerprint]) -> Set<String> {
        Set(new.keys.filter { old[$0] != new[$0] })
    }

    private static func status(of path: String) -> [Int64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = info.st_mtimespec
            let changed = info.st_ctimespec
        #else
            let modified = info.st_mtim
            let changed = info.st_ctim
        #endif
        return [
            Int64(truncatingIfNeeded: info.st_dev), Int64(truncatingIfNeeded: info.st_ino),
            Int64(truncatingIfNeeded: info.st_mode), Int64(truncatingIfNeeded: info.st_size),
            Int64(modified.tv_sec), Int64(modified.tv_nsec),
            Int64(changed.tv_sec), Int64(changed.tv_nsec),
        ]
    }

    private static func entryNames(of path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
