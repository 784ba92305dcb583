/// The three path operations the package needs, on plain strings, as `NSString`'s
/// `lastPathComponent`, `deletingLastPathComponent` and `appendingPathComponent` do them, so that
/// no module needs full Foundation (its `NSString`) to split or join a path.
///
/// Trailing slashes are ignored (`/etc/app/` is the directory `/etc/app`); the root stays `/`.
package enum PathNames {
    /// The last component: `/etc/app/Environments.plist` gives `Environments.plist`; `/` gives
    /// `/`; a path without `/` is returned as it is.
    package static func lastComponent(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard trimmed != "/", let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else { return trimmed }
        return String(trimmed[trimmed.utf8.index(after: slash)...])
    }

    /// The path without its last component: `/etc/app/Environments.plist` gives `/etc/app`;
    /// `/etc` gives `/`; a path without `/` gives the empty string.
    package static func directory(of path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard trimmed != "/", let slash = trimmed.utf8.lastIndex(of: UInt8(ascii: "/")) else {
            return trimmed == "/" ? "/" : ""
        }
        let directory = withoutTrailingSlashes(String(trimmed[..<slash]))
        return directory.isEmpty ? "/" : directory
    }

    /// `component` appended to `directory` with one `/` between them; an empty directory gives
    /// the component alone.
    package static func join(_ directory: String, _ component: String) -> String {
        guard !directory.isEmpty else { return component }
        guard !component.isEmpty else { return withoutTrailingSlashes(directory) }
        let base = withoutTrailingSlashes(directory)
        return base == "/" ? "/" + component : base + "/" + component
    }

    private static func withoutTrailingSlashes(_ path: String) -> String {
        let utf8 = path.utf8
        guard var end = utf8.indices.last, utf8[end] == UInt8(ascii: "/") else { return path }
        // Every trailing `/` but the first byte's: the root stays `/`.
        while end > utf8.startIndex, utf8[end] == UInt8(ascii: "/") { end = utf8.index(before: end) }
        if utf8[end] == UInt8(ascii: "/") { return "/" }
        return String(path[...end])
    }
}
