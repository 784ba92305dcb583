#if os(Linux)
    /// Which directories to watch, and which configured paths an event in each one affects.
    ///
    /// Built from scratch after every batch, since symbolic links may point elsewhere by then.
    struct WatchPlan: Sendable {
        /// The directories to watch, as absolute paths without symbolic links.
        private(set) var directories: Set<String> = []
        /// Configured paths affected by a change of one directory entry.
        private var entryInterests: [DirectoryEntry: Set<String>] = [:]
        /// Configured directories affected by a change of any entry in a directory that passes
        /// the configuration's entry filter.
        private var contentInterests: [String: Set<String>] = [:]
        /// Which entries of a directory in ``contentInterests`` matter.
        private var entryFilter: @Sendable (String) -> Bool = { _ in true }
        /// Configured paths affected when a watched directory itself is deleted or moved.
        private var directoryInterests: [String: Set<String>] = [:]

        /// An empty plan, watching nothing.
        init() {}

        /// Resolves every configured path and records what to watch for it.
        ///
        /// An entry of a watched directory that is a symbolic link (a drop-in linked to a file
        /// kept elsewhere, as configuration management and `/nix/store`-style deployments do)
        /// is followed to its target, across chains of links: a change of any link on the way
        /// or of the target affects the directory.
        init(configuration: WatchConfiguration) {
            entryFilter = configuration.entryFilter
            for file in configuration.files {
                let resolution = PathResolver.resolve(file.absolute)
                for entry in resolution.entries {
                    addInterest(in: entry, for: file.configured)
                }
            }
            for directory in configuration.directories {
                let resolution = PathResolver.resolve(directory.absolute)
                for entry in resolution.entries {
                    addInterest(in: entry, for: directory.configured)
                }
                if let target = resolution.target, resolution.targetIsDirectory {
                    directories.insert(target)
                    contentInterests[target, default: []].insert(directory.configured)
                    directoryInterests[target, default: []].insert(directory.configured)
                    for link in PathResolver.symbolicLinks(in: target) where entryFilter(link) {
                        let linked = PathResolver.resolve(PathResolver.join(target, link))
                        // The first entry is the link itself, already covered by the directory.
                        for entry in linked.entries.dropFirst() {
                            addInterest(in: entry, for: directory.configured)
                        }
                    }
                }
            }
        }

        private mutating func addInterest(in entry: DirectoryEntry, for path: String) {
            directories.insert(entry.directory)
            entryInterests[entry, default: []].insert(path)
            directoryInterests[entry.directory, default: []].insert(path)
        }

        /// The configured paths affected by an event in the watched `directory`.
        ///
        /// - Parameters:
        ///   - directory: The watched directory the event was reported for.
        ///   - name: The entry the event is about, or `nil` if it is about the directory itself
        ///     (deleted, moved away or unmounted).
        func affectedPaths(directory: String, name: String?) -> Set<String> {
            guard let name else { return directoryInterests[directory] ?? [] }
            let entry = DirectoryEntry(directory: directory, name: name)
            let interested = entryInterests[entry] ?? []
            guard let content = contentInterests[directory], entryFilter(name) else { return interested }
            return interested.union(content)
        }
    }
#endif
