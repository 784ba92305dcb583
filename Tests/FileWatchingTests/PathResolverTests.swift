#if os(Linux)
    import Testing

    @testable import FileWatching
    import ThreadBridge

    /// A file `F` in `directory` as a Kubernetes ConfigMap volume lays it out: `F` links to
    /// `..data/F`, `..data` to the version directory `..v1`, which holds the file.
    func makeConfigMapFile(in directory: String) throws {
        try FS.makeDirectory(directory + "/..v1")
        try FS.writeInPlace(directory + "/..v1/F", "x")
        try FS.makeSymlink("..v1", at: directory + "/..data")
        try FS.makeSymlink("..data/F", at: directory + "/F")
    }

    extension FileWatchingTests {
        /// Resolving paths while recording the entries that matter.
        @Suite struct PathResolverTests {
            @Test func aPlainFileDependsOnItsOwnEntry() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.writeInPlace(directory + "/a", "x")
                    let resolution = PathResolver.resolve(directory + "/./a")
                    #expect(resolution.entries == [DirectoryEntry(directory: directory, name: "a")])
                    #expect(resolution.target == directory + "/a")
                    #expect(!resolution.targetIsDirectory)
                }
            }

            @Test func aConfigMapFileDependsOnEveryLinkOnTheWay() async throws {
                try await withTemporaryDirectory { directory in
                    try makeConfigMapFile(in: directory)
                    let resolution = PathResolver.resolve(directory + "/F")
                    #expect(
                        resolution.entries == [
                            DirectoryEntry(directory: directory, name: "F"),
                            DirectoryEntry(directory: directory, name: "..data"),
                            DirectoryEntry(directory: directory + "/..v1", name: "F"),
                        ])
                    #expect(resolution.target == directory + "/..v1/F")
                }
            }

            @Test func aMissingPathDependsOnTheFirstMissingComponent() async throws {
                try await withTemporaryDirectory { directory in
                    let resolution = PathResolver.resolve(directory + "/etc/app/F")
                    #expect(resolution.entries == [DirectoryEntry(directory: directory, name: "etc")])
                    #expect(resolution.target == nil)
                }
            }

            @Test func aDanglingLinkDependsOnTheLinkAndItsTarget() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.makeSymlink("/nonexistent-\(Int.random(in: 0...999_999))/F", at: directory + "/F")
                    let resolution = PathResolver.resolve(directory + "/F")
                    #expect(resolution.entries.first == DirectoryEntry(directory: directory, name: "F"))
                    #expect(resolution.entries.last?.directory == "/")
                    #expect(resolution.target == nil)
                }
            }

            @Test func aSymlinkLoopEnds() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.makeSymlink("b", at: directory + "/a")
                    try FS.makeSymlink("a", at: directory + "/b")
                    let resolution = PathResolver.resolve(directory + "/a")
                    #expect(resolution.target == nil)
                    #expect(resolution.entries.count == PathResolver.maximumLinks + 1)
                }
            }

            @Test func aDirectoryIsResolvedThroughParentReferences() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.makeDirectory(directory + "/d")
                    let resolution = PathResolver.resolve(directory + "/d/..")
                    #expect(resolution.target == directory)
                    #expect(resolution.targetIsDirectory)
                    #expect(resolution.entries.last?.name == PathResolver.baseName(of: directory))
                }
            }
        }
    }
#endif

#if os(Linux)
    extension FileWatchingTests {
        /// How events in watched directories map back to configured paths.
        @Suite struct WatchPlanTests {
            @Test func aConfigMapFileIsAffectedByEveryLinkAndNothingElse() async throws {
                try await withTemporaryDirectory { directory in
                    try makeConfigMapFile(in: directory)
                    let file = directory + "/F"
                    let configuration = WatchConfiguration(files: [file], directories: [], debounce: .zero)
                    let plan = WatchPlan(configuration: configuration)
                    #expect(plan.directories == [directory, directory + "/..v1"])
                    #expect(plan.affectedPaths(directory: directory, name: "F") == [file])
                    #expect(plan.affectedPaths(directory: directory, name: "..data") == [file])
                    #expect(plan.affectedPaths(directory: directory + "/..v1", name: "F") == [file])
                    #expect(plan.affectedPaths(directory: directory, name: "..data_tmp").isEmpty)
                    #expect(plan.affectedPaths(directory: directory, name: "..v2").isEmpty)
                    #expect(plan.affectedPaths(directory: directory + "/..v1", name: nil) == [file])
                }
            }

            @Test func aDirectoryIsAffectedByAnyEntryAndByItsOwnEntry() async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/D.d"
                    try FS.makeDirectory(dropIn)
                    let configuration = WatchConfiguration(files: [], directories: [dropIn], debounce: .zero)
                    let plan = WatchPlan(configuration: configuration)
                    #expect(plan.directories == [directory, dropIn])
                    #expect(plan.affectedPaths(directory: dropIn, name: "anything") == [dropIn])
                    #expect(plan.affectedPaths(directory: dropIn, name: nil) == [dropIn])
                    #expect(plan.affectedPaths(directory: directory, name: "D.d") == [dropIn])
                    #expect(plan.affectedPaths(directory: directory, name: "other").isEmpty)
                }
            }

            @Test func aQueueOverflowReportsEveryPathAndUnknownWatchesAreIgnored() throws {
                let configuration = WatchConfiguration(
                    files: ["/nonexistent/F"], directories: ["/nonexistent/D"], debounce: .zero)
                let loop = try InotifyWatchLoop(
                    configuration: configuration, logger: testLogger, wakeup: WakeupPipe(),
                    mailbox: BatchMailbox())
                loop.handle([Inotify.Event(watchDescriptor: .init(rawValue: 4242), mask: .created, name: "F")])
                #expect(!loop.accumulator.isCollecting)
                loop.handle([Inotify.Event(watchDescriptor: .none, mask: .queueOverflowed)])
                var accumulator = loop.accumulator
                let batch = accumulator.takeIfDue(at: .now + .seconds(1))
                #expect(
                    batch
                        == FileChangeBatch(
                            paths: ["/nonexistent/F", "/nonexistent/D"], overflowed: true, eventCount: 1))
            }
        }
    }
#endif
