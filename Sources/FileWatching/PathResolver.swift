#if os(Linux)
    import Glibc

    /// An entry `name` in the directory `directory` (an absolute path without symbolic links).
    struct DirectoryEntry: Sendable, Hashable {
        /// The directory holding the entry.
        var directory: String
        /// The entry's name.
        var name: String
    }

    /// The result of resolving a path one component at a time.
    struct PathResolution: Sendable, Hashable {
        /// Every directory entry whose replacement would change what the path leads to: each
        /// symbolic link followed on the way, plus the final (or first missing) component.
        var entries: [DirectoryEntry]
        /// The fully resolved path, or `nil` if the path does not lead to an existing object.
        var target: String?
        /// Whether ``target`` is a directory.
        var targetIsDirectory: Bool
    }

    /// Resolves paths like `realpath(3)`, but records the symbolic links it follows.
    ///
    /// For a Kubernetes ConfigMap file `D/F -> ..data/F` with `D/..data -> ..2026_…`, the entries
    /// are `(D, F)`, `(D, ..data)` and `(D/..2026_…, F)`: a change to any of them changes `D/F`.
    enum PathResolver {
        /// How many symbolic links a path may traverse, like the kernel's `ELOOP` limit.
        static let maximumLinks = 40

        /// Resolves the absolute path `path`.
        static func resolve(_ path: String) -> PathResolution {
            var pending = Array(path.split(separator: "/").reversed())
            var resolved = "/"
            var entries: [DirectoryEntry] = []
            var links = 0
            while let component = pending.popLast() {
                if component == "." { continue }
                if component == ".." {
                    resolved = parent(of: resolved)
                    continue
                }
                let entry = DirectoryEntry(directory: resolved, name: String(component))
                let candidate = join(resolved, entry.name)
                var info = stat()
                guard lstat(candidate, &info) == 0 else {
                    entries.append(entry)
                    return PathResolution(entries: entries, target: nil, targetIsDirectory: false)
                }
                let type = info.st_mode & S_IFMT
                if type == S_IFLNK {
                    entries.append(entry)
                    links += 1
                    guard links <= maximumLinks, let destination = readLink(candidate) else {
                        return PathResolution(entries: entries, target: nil, targetIsDirectory: false)
                    }
                    if destination.hasPrefix("/") { resolved = "/" }
                    pending.append(contentsOf: destination.split(separator: "/").reversed())
                    continue
                }
                if pending.allSatisfy({ $0 == "." }) {
                    entries.append(entry)
                    return PathResolution(
                        entries: entries, target: candidate, targetIsDirectory: type == S_IFDIR)
                }
                guard type == S_IFDIR else {
                    entries.append(entry)
                    return PathResolution(entries: entries, target: nil, targetIsDirectory: false)
                }
                resolved = candidate
            }
            // The path ended in `..` (or was `/`): the final directory still matters.
            if resolved != "/" {
                let final = DirectoryEntry(directory: parent(of: resolved), name: baseName(of: resolved))
                if entries.last != final { entries.append(final) }
            }
            return PathResolution(entries: entries, target: resolved, targetIsDirectory: true)
        }

        /// `directory/name`, without doubling the root's slash.
        static func join(_ directory: String, _ name: String) -> String {
            directory == "/" ? "/" + name : directory + "/" + name
        }

        /// The parent of an absolute, normalized path; `/` for `/`.
        static func parent(of path: String) -> String {
            guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
            return String(path[..<slash])
        }

        /// The last component of an absolute, normalized path.
        static func baseName(of path: String) -> String {
            guard let slash = path.lastIndex(of: "/") else { return path }
            return String(path[path.index(after: slash)...])
        }

        /// The names of the symbolic links directly in `directory` (none if it cannot be read).
        static func symbolicLinks(in directory: String) -> [String] {
            guard let stream = opendir(directory) else { return [] }
            defer { closedir(stream) }
            var names: [String] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                    String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                guard name != "." && name != ".." else { continue }
                var info = stat()
                if Int32(entry.pointee.d_type) == DT_LNK
                    || (Int32(entry.pointee.d_type) == DT_UNKNOWN && lstat(join(directory, name), &info) == 0
                        && info.st_mode & S_IFMT == S_IFLNK)
                {
                    names.append(name)
                }
            }
            return names
        }

        /// The destination of the symbolic link at `path`, or `nil` if it cannot be read.
        private static func readLink(_ path: String) -> String? {
            var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = buffer.withUnsafeMutableBytes { bytes in
                readlink(path, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count - 1)
            }
            guard count > 0 else { return nil }
            return String(decoding: buffer[..<count], as: UTF8.self)
        }
    }
#endif
