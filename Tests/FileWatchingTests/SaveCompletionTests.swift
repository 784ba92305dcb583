#if os(Linux)
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// A burst that ends by completing a save is reported after the short settle; one that
        /// may still be in progress waits for the debounce.
        ///
        /// Timing is only checked as an ordering with wide margins: "long before a 5 s debounce"
        /// means within 2 s, and "not before the debounce" compares against the moment just
        /// before the write.
        @Suite struct SaveCompletionTests {
            /// A debounce far longer than any report that ends with a completion event may take.
            private let longDebounce: Duration = .seconds(5)
            /// How long a report after a completion event may take, on a loaded machine.
            private let wellBeforeTheDebounce: Duration = .seconds(2)

            @Test func eventsAreClassified() {
                for mask: Inotify.Mask in [.closedAfterWriting, .movedTo, [.movedTo, .isDirectory]] {
                    #expect(InotifyWatchLoop.isCompletion(mask), "\(mask)")
                }
                let inProgress: [Inotify.Mask] = [
                    .created, [.created, .isDirectory], .modified, .deleted, .movedFrom,
                    .attributesChanged, .deletedSelf, .movedSelf, .unmounted, .queueOverflowed,
                ]
                for mask in inProgress {
                    #expect(!InotifyWatchLoop.isCompletion(mask), "\(mask)")
                }
            }

            @Test func anAtomicSaveIsReportedLongBeforeTheDebounce() async throws {
                try await withWatchedFile(debounce: longDebounce) { file, recorder in
                    try FS.writeAtomically(file, "version 2")
                    #expect(await recorder.waitForChange(of: [file], timeout: wellBeforeTheDebounce))
                }
            }

            @Test func aWriteInPlaceIsReportedLongBeforeTheDebounce() async throws {
                try await withWatchedFile(debounce: longDebounce) { file, recorder in
                    // Truncating and writing are in progress; the close completes the save.
                    try FS.writeInPlace(file, "version 2")
                    #expect(await recorder.waitForChange(of: [file], timeout: wellBeforeTheDebounce))
                }
            }

            @Test func aFileInADropInDirectoryIsReportedLongBeforeTheDebounce() async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/Environments.plist.d"
                    try FS.makeDirectory(dropIn)
                    try await withWatcher(directories: [dropIn], debounce: longDebounce) { recorder in
                        try FS.writeInPlace(dropIn + "/10-local.plist", "x")
                        #expect(await recorder.waitForChange(of: [dropIn], timeout: wellBeforeTheDebounce))
                    }
                }
            }

            @Test func aWriterThatPausesIsWaitedForUntilItCloses() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    try FS.writeInPlace(file, "v1")
                    // The default 50 ms debounce: the pause below is eight times longer.
                    try await withWatcher(files: [file]) { recorder in
                        let writer = try OpenFile(file)
                        defer { writer.close() }
                        try writer.write("half of ")
                        try await Task.sleep(for: .milliseconds(400))
                        #expect(recorder.batches.isEmpty, "reported while the file was still open for writing")
                        try writer.write("the file")
                        writer.close()
                        #expect(await recorder.waitForChange(of: [file], timeout: wellBeforeTheDebounce))
                        #expect(await recorder.staysQuiet())
                        #expect(recorder.batches.count == 1)
                    }
                }
            }

            @Test func aWriterThatNeverClosesIsReadOnceTheLimitIsReached() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    try FS.writeInPlace(file, "v1")
                    let limit: Duration = .seconds(1)
                    try await withWatcher(files: [file], openWriteLimit: limit) { recorder in
                        let clock = ContinuousClock()
                        let beforeWriting = clock.now
                        let writer = try OpenFile(file)
                        defer { writer.close() }
                        try writer.write("never finished")
                        // Read as it is once the limit is reached, not before.
                        #expect(await recorder.waitForChange(of: [file]))
                        let first = try #require(recorder.arrivals.first)
                        #expect(first - beforeWriting >= limit)
                        // Closing it later completes the save, which is reported again.
                        recorder.reset()
                        writer.close()
                        #expect(await recorder.waitForChange(of: [file], timeout: wellBeforeTheDebounce))
                    }
                }
            }

            @Test func aFileStillOpenHoldsBackAnotherFilesCompletedSave() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    let dropIn = directory + "/Environments.plist.d"
                    try FS.writeInPlace(file, "v1")
                    try FS.makeDirectory(dropIn)
                    try await withWatcher(files: [file], directories: [dropIn]) { recorder in
                        let writer = try OpenFile(file)
                        defer { writer.close() }
                        try writer.write("half of ")
                        // Another file completes its save while the first is still open.
                        try FS.writeAtomically(dropIn + "/10-local.plist", "complete")
                        try await Task.sleep(for: .milliseconds(400))
                        #expect(recorder.batches.isEmpty, "reported while a file was still open for writing")
                        try writer.write("the file")
                        writer.close()
                        #expect(await recorder.waitForChange(of: [file, dropIn], timeout: wellBeforeTheDebounce))
                        #expect(recorder.batches.count == 1)
                    }
                }
            }

            @Test func writeEffectsOfEvents() throws {
                #expect(InotifyWatchLoop.writeEffect(of: .modified, on: "/nonexistent") == .opened)
                for mask: Inotify.Mask in [.closedAfterWriting, .movedTo, .movedFrom, .deleted] {
                    #expect(InotifyWatchLoop.writeEffect(of: mask, on: "/nonexistent") == .closed, "\(mask)")
                }
                for mask: Inotify.Mask in [.attributesChanged, [.modified, .isDirectory], .created] {
                    #expect(InotifyWatchLoop.writeEffect(of: mask, on: "/nonexistent") == .none, "\(mask)")
                }
            }

            @Test func closingAFileBeingWrittenEndsTheWait() async throws {
                try await withWatchedFile(debounce: longDebounce) { file, recorder in
                    let writer = try OpenFile(file)
                    defer { writer.close() }
                    try writer.write("first half, ")
                    try await Task.sleep(for: .milliseconds(100))
                    try writer.write("second half")
                    try await Task.sleep(for: .milliseconds(100))
                    #expect(recorder.batches.isEmpty)
                    writer.close()
                    #expect(await recorder.waitForChange(of: [file], timeout: wellBeforeTheDebounce))
                    #expect(recorder.batches.count == 1)
                }
            }

            @Test func aTemporaryFileRenamedOverIsOneBatch() async throws {
                try await withWatchedFile(debounce: longDebounce) { file, recorder in
                    // Create, write and close the temporary file, then rename it over the file.
                    try FS.writeAtomically(file, "version 2")
                    #expect(await recorder.waitForChange(of: [file], timeout: wellBeforeTheDebounce))
                    #expect(await recorder.staysQuiet())
                    #expect(recorder.batches.count == 1)
                    #expect(recorder.changedPaths == [file])
                }
            }

            @Test func aTemporaryFileRenamedOverInADropInDirectoryIsOneBatch() async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/Environments.plist.d"
                    try FS.makeDirectory(dropIn)
                    try FS.writeInPlace(dropIn + "/10-local.plist", "v1")
                    // Every step here is an event for the directory, and closing the temporary file
                    // already completes a save, so only the settle holds the burst together until the
                    // rename. Steps within the default 2 ms are the norm, but a preempted test thread
                    // could take longer: a 1 s settle keeps the test deterministic.
                    try await withWatcher(
                        directories: [dropIn], debounce: longDebounce, settle: .seconds(1)
                    ) { recorder in
                        try FS.writeAtomically(dropIn + "/10-local.plist", "version 2")
                        #expect(await recorder.waitForChange(of: [dropIn], timeout: .seconds(3)))
                        #expect(await recorder.staysQuiet())
                        let batches = recorder.batches
                        #expect(batches.count == 1)
                        #expect(batches.first?.paths == [dropIn])
                        // Created, modified, closed, moved from and moved to.
                        #expect((batches.first?.eventCount ?? 0) >= 3)
                    }
                }
            }
        }
    }
#endif
