#if os(Linux)
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Changes inside a watched (drop-in) directory, and to the directory itself.
        @Suite struct DirectoryWatchTests {
            /// Runs `body` with `dir/Environments.plist.d` (created unless `create` is false, with a
            /// file `10-local.plist` in it if `withFile`) watched; `prepare` runs on `dir` first.
            private func withDropIn(
                create: Bool = true, withFile: Bool = false, prepare: (String) throws -> Void = { _ in },
                _ body: (String, String, BatchRecorder) async throws -> Void
            ) async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/Environments.plist.d"
                    if create { try FS.makeDirectory(dropIn) }
                    if withFile { try FS.writeInPlace(dropIn + "/10-local.plist", "x") }
                    try prepare(directory)
                    try await withWatcher(directories: [dropIn]) { recorder in
                        try await body(directory, dropIn, recorder)
                    }
                }
            }

            @Test func fileAdded() async throws {
                try await withDropIn { _, dropIn, recorder in
                    try FS.writeInPlace(dropIn + "/10-local.plist", "x")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    #expect(recorder.batches.allSatisfy { $0.paths == [dropIn] })
                }
            }

            @Test func fileModifiedInside() async throws {
                try await withDropIn(withFile: true) { _, dropIn, recorder in
                    try FS.writeInPlace(dropIn + "/10-local.plist", "changed")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    try FS.writeAtomically(dropIn + "/10-local.plist", "renamed over")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func fileRemoved() async throws {
                try await withDropIn(withFile: true) { _, dropIn, recorder in
                    try FS.delete(dropIn + "/10-local.plist")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func fileRenamedInside() async throws {
                try await withDropIn(withFile: true) { _, dropIn, recorder in
                    try FS.move(dropIn + "/10-local.plist", to: dropIn + "/20-local.plist")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func fileRenamedIntoAndOutOf() async throws {
                try await withDropIn { directory, dropIn, recorder in
                    try FS.writeInPlace(directory + "/staged.plist", "x")
                    try FS.move(directory + "/staged.plist", to: dropIn + "/30-staged.plist")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    try FS.move(dropIn + "/30-staged.plist", to: directory + "/disabled.plist")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func directoryCreatedLater() async throws {
                try await withDropIn(create: false) { _, dropIn, recorder in
                    try FS.makeDirectory(dropIn)
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    // The new directory is watched from then on.
                    try FS.writeInPlace(dropIn + "/10-local.plist", "x")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func directoryDeleted() async throws {
                try await withDropIn(withFile: true) { _, dropIn, recorder in
                    try FS.delete(dropIn + "/10-local.plist")
                    try FS.removeDirectory(dropIn)
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    // And created again.
                    try FS.makeDirectory(dropIn)
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }

            @Test func directoryReplacedByRename() async throws {
                try await withDropIn(prepare: { try FS.makeDirectory($0 + "/next") }) { directory, dropIn, recorder in
                    try FS.move(dropIn, to: directory + "/previous")
                    try FS.move(directory + "/next", to: dropIn)
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    // The moved-away directory no longer matters; the one now in place does.
                    try FS.writeInPlace(directory + "/previous/a.plist", "x")
                    #expect(await recorder.staysQuiet())
                    try FS.writeInPlace(dropIn + "/a.plist", "x")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                }
            }
        }
    }
#endif
