#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A configured path: the spelling the caller used, and the absolute path it stands for.
struct WatchedPath: Sendable, Hashable {
    /// The path as given to ``FileWatcher``; batches report this spelling.
    var configured: String
    /// The path made absolute against the working directory at configuration time.
    var absolute: String

    /// Makes `path` absolute against `workingDirectory` if it is relative.
    init(_ path: String, workingDirectory: String) {
        configured = path
        if path.hasPrefix("/") {
            absolute = path
        } else if workingDirectory.hasSuffix("/") {
            absolute = workingDirectory + path
        } else {
            absolute = workingDirectory + "/" + path
        }
    }
}

/// What a ``FileWatcher`` watches and how it coalesces, shared with its watch loops.
struct WatchConfiguration: Sendable {
    /// Regular files (possibly symbolic links, possibly missing).
    var files: [WatchedPath]
    /// Directories whose entries matter (possibly missing).
    var directories: [WatchedPath]
    /// The quiet time that ends a burst whose last event may be part of a save still in
    /// progress.
    var debounce: Duration
    /// The quiet time that ends a burst whose last event completed a save (a file opened for
    /// writing was closed, or a file was renamed into place); at most ``debounce``.
    var settle: Duration
    /// The longest a burst is held back while events keep arriving.
    var maximumDelay: Duration
    /// The longest a burst waits for a file that is still open for writing.
    var openWriteLimit: Duration
    /// Which entries of the watched directories matter (by name); the others are ignored.
    var entryFilter: @Sendable (String) -> Bool

    /// Every configured path, as the caller spelled it.
    var allPaths: Set<String> {
        Set(files.map(\.configured)).union(directories.map(\.configured))
    }

    /// Creates a configuration, resolving relative paths against the current directory.
    ///
    /// - Parameters:
    ///   - files: Regular files to watch.
    ///   - directories: Directories whose entries matter.
    ///   - debounce: The quiet time after an event of a save that may still be in progress;
    ///     negative values count as zero. The maximum delay is ten times this.
    ///   - settle: The quiet time after an event that completed a save; negative values count
    ///     as zero, values above `debounce` as `debounce`.
    ///   - openWriteLimit: The longest a burst waits for a file still open for writing; at
    ///     least `debounce`.
    ///   - entryFilter: Which entries of the watched directories matter, by name.
    init(
        files: [String], directories: [String], debounce: Duration,
        settle: Duration = .milliseconds(2), openWriteLimit: Duration = .seconds(5),
        entryFilter: @escaping @Sendable (String) -> Bool = { _ in true }
    ) {
        let workingDirectory = Self.currentDirectory()
        self.files = files.map { WatchedPath($0, workingDirectory: workingDirectory) }
        self.directories = directories.map { WatchedPath($0, workingDirectory: workingDirectory) }
        self.debounce = max(debounce, .zero)
        self.settle = min(max(settle, .zero), self.debounce)
        self.maximumDelay = max(self.debounce * 10, .milliseconds(1))
        self.openWriteLimit = max(openWriteLimit, self.debounce)
        self.entryFilter = entryFilter
    }

    /// The process's working directory, or `/` if it cannot be determined.
    private static func currentDirectory() -> String {
        guard let pointer = getcwd(nil, 0) else { return "/" }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
