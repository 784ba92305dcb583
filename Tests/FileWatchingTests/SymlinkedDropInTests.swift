#if os(Linux)
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Drop-ins that are symbolic links to files kept elsewhere (configuration management,
        /// `/nix/store`-style deployments) are watched through to their targets, and entries
        /// that are not drop-ins are ignored.
        @Suite struct SymlinkedDropInTests {
            private static let isDropIn: @Sendable (String) -> Bool = { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }

            /// Runs `body` with `dir/Environments.plist.d` watched (drop-ins only) beside
            /// `dir/store`, which holds `target.plist`, linked into the drop-ins as
            /// `10-linked.plist` if `linked`.
            private func withLinkedStore(
                linked: Bool = true, backend: FileWatcher.Backend = .native,
                _ body: (_ dropIn: String, _ store: String, BatchRecorder) async throws -> Void
            ) async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/Environments.plist.d"
                    let store = directory + "/store"
                    try FS.makeDirectory(dropIn)
                    try FS.makeDirectory(store)
                    try FS.writeInPlace(store + "/target.plist", "v1")
                    if linked { try FS.makeSymlink("../store/target.plist", at: dropIn + "/10-linked.plist") }
                    try await withWatcher(directories: [dropIn], entryFilter: Self.isDropIn, backend: backend) {
                        try await body(dropIn, store, $0)
                    }
                }
            }

            @Test func aChangeOfALinkedDropInsTargetIsReported() async throws {
                try await withLinkedStore { dropIn, store, recorder in
                    // Written in place.
                    try FS.writeInPlace(store + "/target.plist", "v2")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    // Replaced by a rename, as editors and deployment tools do.
                    try FS.writeAtomically(store + "/target.plist", "v3")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    // An unrelated file next to the target is not a change.
                    try FS.writeInPlace(store + "/other.plist", "x")
                    #expect(await recorder.staysQuiet())
                }
            }

            @Test func aChainOfLinksIsFollowedAndRetargetingItMovesTheWatch() async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/Environments.plist.d"
                    let links = directory + "/links"
                    let store = directory + "/store"
                    for path in [dropIn, links, store] { try FS.makeDirectory(path) }
                    try FS.writeInPlace(store + "/first.plist", "v1")
                    try FS.writeInPlace(store + "/second.plist", "v1")
                    try FS.makeSymlink(links + "/current", at: dropIn + "/20-chain.plist")
                    try FS.makeSymlink("../store/first.plist", at: links + "/current")
                    try await withWatcher(directories: [dropIn], entryFilter: Self.isDropIn) { recorder in
                        try FS.writeInPlace(store + "/first.plist", "v2")
                        #expect(await recorder.waitForChange(of: [dropIn]))
                        await recorder.settle()
                        // The middle link now leads to another file.
                        try FS.retarget(links + "/current", to: "../store/second.plist")
                        #expect(await recorder.waitForChange(of: [dropIn]))
                        await recorder.settle()
                        try FS.writeInPlace(store + "/second.plist", "v2")
                        #expect(await recorder.waitForChange(of: [dropIn]))
                        await recorder.settle()
                        // The old target is no longer part of the configuration.
                        try FS.writeInPlace(store + "/first.plist", "v3")
                        #expect(await recorder.staysQuiet())
                    }
                }
            }

            @Test func aLinkAddedLaterIsFollowedToo() async throws {
                try await withLinkedStore(linked: false) { dropIn, store, recorder in
                    try FS.makeSymlink(store + "/target.plist", at: dropIn + "/30-late.plist")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    try FS.writeInPlace(store + "/target.plist", "v2")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func entriesThatAreNotDropInsAreIgnored() async throws {
                try await withLinkedStore(linked: false) { dropIn, _, recorder in
                    // An editor's swap file, kept open for writing, and a stray note.
                    let swap = try OpenFile(dropIn + "/.10-local.plist.swp")
                    defer { swap.close() }
                    try swap.write("swap")
                    try FS.writeInPlace(dropIn + "/README.txt", "notes")
                    #expect(await recorder.staysQuiet())
                    // A drop-in saved meanwhile is reported at once: the open swap file
                    // does not hold it back.
                    try FS.writeAtomically(dropIn + "/10-local.plist", "v1")
                    #expect(await recorder.waitForChange(of: [dropIn], timeout: .seconds(2)))
                }
            }

            @Test func pollingFollowsLinksAndIgnoresOtherEntriesToo() async throws {
                try await withLinkedStore(backend: .polling(interval: .milliseconds(50))) { dropIn, store, recorder in
                    try FS.writeInPlace(dropIn + "/README.txt", "notes")
                    #expect(await recorder.staysQuiet())
                    try FS.writeInPlace(store + "/target.plist", "version 2")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }
        }
    }
#endif
