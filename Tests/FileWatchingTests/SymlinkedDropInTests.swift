#if os(Linux)
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Drop-ins that are symbolic links to files kept elsewhere (configuration management,
        /// `/nix/store`-style deployments) are watched through to their targets, and entries
        /// that are not drop-ins are ignored.
        @Suite struct SymlinkedDropInTests {
            private static let isDropIn: @Sendable (String) -> Bool = { $0.hasSuffix(".plist") && !$0.hasPrefix(".") }

            /// A test's temporary directory: `Environments.plist.d`, watched (drop-ins only), and
            /// `store` beside it, which holds `target.plist`.
            struct Layout {
                let directory: String
                var dropIn: String { directory + "/Environments.plist.d" }
                var store: String { directory + "/store" }
            }

            /// Runs `body` with a fresh ``Layout`` watched, `target.plist` linked into the drop-ins
            /// as `10-linked.plist` if `linked`; `prepare` adds to the layout before watching starts.
            private func withLinkedStore(
                linked: Bool = true, backend: FileWatcher.Backend = .native,
                prepare: (Layout) throws -> Void = { _ in },
                _ body: (Layout, BatchRecorder) async throws -> Void
            ) async throws {
                try await withTemporaryDirectory { directory in
                    let layout = Layout(directory: directory)
                    try FS.makeDirectory(layout.dropIn)
                    try FS.makeDirectory(layout.store)
                    try FS.writeInPlace(layout.store + "/target.plist", "v1")
                    if linked { try FS.makeSymlink("../store/target.plist", at: layout.dropIn + "/10-linked.plist") }
                    try prepare(layout)
                    try await withWatcher(directories: [layout.dropIn], entryFilter: Self.isDropIn, backend: backend) {
                        try await body(layout, $0)
                    }
                }
            }

            @Test func aChangeOfALinkedDropInsTargetIsReported() async throws {
                try await withLinkedStore { layout, recorder in
                    let target = layout.store + "/target.plist"
                    try await recorder.expect(
                        [layout.dropIn],
                        after: .reported { try FS.writeInPlace(target, "v2") },
                        // Replaced by a rename, as editors and deployment tools do.
                        .reported { try FS.writeAtomically(target, "v3") },
                        // An unrelated file next to the target is not a change.
                        .ignored { try FS.writeInPlace(layout.store + "/other.plist", "x") })
                }
            }

            @Test func aChainOfLinksIsFollowedAndRetargetingItMovesTheWatch() async throws {
                try await withLinkedStore(linked: false, prepare: Self.addChain(to:)) { layout, recorder in
                    try await recorder.expect(
                        [layout.dropIn],
                        after: .reported { try FS.writeInPlace(layout.store + "/target.plist", "v2") },
                        // The middle link now leads to another file.
                        .reported { try FS.retarget(layout.directory + "/links/current", to: "../store/second.plist") },
                        .reported { try FS.writeInPlace(layout.store + "/second.plist", "v2") },
                        // The old target is no longer part of the configuration.
                        .ignored { try FS.writeInPlace(layout.store + "/target.plist", "v3") })
                }
            }

            /// Links `20-chain.plist` into the drop-ins through `links/current`, a link to the
            /// store's `target.plist`, and writes `second.plist`, another target, into the store.
            private static func addChain(to layout: Layout) throws {
                let links = layout.directory + "/links"
                try FS.makeDirectory(links)
                try FS.writeInPlace(layout.store + "/second.plist", "v1")
                try FS.makeSymlink(links + "/current", at: layout.dropIn + "/20-chain.plist")
                try FS.makeSymlink("../store/target.plist", at: links + "/current")
            }

            @Test func aLinkAddedLaterIsFollowedToo() async throws {
                try await withLinkedStore(linked: false) { layout, recorder in
                    try await recorder.expect(
                        [layout.dropIn],
                        after: .reported {
                            try FS.makeSymlink(layout.store + "/target.plist", at: layout.dropIn + "/30-late.plist")
                        },
                        .reported { try FS.writeInPlace(layout.store + "/target.plist", "v2") })
                }
            }

            @Test func entriesThatAreNotDropInsAreIgnored() async throws {
                try await withLinkedStore(linked: false) { layout, recorder in
                    // An editor's swap file, kept open for writing, and a stray note.
                    let swap = try OpenFile(layout.dropIn + "/.10-local.plist.swp")
                    defer { swap.close() }
                    try swap.write("swap")
                    try FS.writeInPlace(layout.dropIn + "/README.txt", "notes")
                    #expect(await recorder.staysQuiet())
                    // A drop-in saved meanwhile is reported at once: the open swap file
                    // does not hold it back.
                    try FS.writeAtomically(layout.dropIn + "/10-local.plist", "v1")
                    #expect(await recorder.waitForChange(of: [layout.dropIn], timeout: .seconds(2)))
                }
            }

            @Test func pollingFollowsLinksAndIgnoresOtherEntriesToo() async throws {
                try await withLinkedStore(backend: .polling(interval: .milliseconds(50))) { layout, recorder in
                    try await recorder.expect(
                        [layout.dropIn],
                        after: .ignored { try FS.writeInPlace(layout.dropIn + "/README.txt", "notes") },
                        .reported { try FS.writeInPlace(layout.store + "/target.plist", "version 2") })
                }
            }
        }
    }
#endif
