#if os(Linux)
    import Foundation
    import Locking
    import Synchronization
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Coalescing, filtering and the life cycle of ``FileWatcher/run(onChange:)``.
        @Suite struct WatcherBehaviourTests {
            @Test func aBurstOfWritesIsReportedOnce() async throws {
                // Every write in place ends with a close, which completes a save; a settle as long
                // as the debounce keeps the burst together even if this thread is preempted
                // between two writes.
                try await withWatchedFile(
                    contents: "v0", debounce: .milliseconds(100), settle: .milliseconds(100)
                ) { file, recorder in
                    for index in 1...20 {
                        try FS.writeInPlace(file, "version \(index)")
                    }
                    #expect(await recorder.waitForChange(of: [file]))
                    try await Task.sleep(for: .milliseconds(500))
                    let count = recorder.batches.count
                    #expect(count >= 1 && count <= 3, "\(count) batches")
                    #expect(recorder.batches.reduce(0) { $0 + $1.eventCount } >= 20)
                }
            }

            @Test func aContinuousStreamIsStillReported() async throws {
                try await withWatchedFile(
                    contents: "v0", debounce: .milliseconds(100), openWriteLimit: .seconds(1)
                ) { file, recorder in
                    // Writes every 20 ms to a file kept open never leave 100 ms of quiet nor
                    // complete the save; the 1 s limit on waiting for an open file still
                    // reports them while writing goes on.
                    let writer = try OpenFile(file)
                    defer { writer.close() }
                    let clock = ContinuousClock()
                    let deadline = clock.now + eventTimeout
                    var index = 0
                    while recorder.batches.isEmpty, clock.now < deadline {
                        index += 1
                        try writer.write("version \(index)\n")
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(!recorder.batches.isEmpty)
                }
            }

            @Test func unrelatedFilesInTheSameDirectoryAreIgnored() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    let other = directory + "/Other.plist"
                    try FS.writeInPlace(file, "v1")
                    try FS.writeInPlace(other, "v1")
                    try await withWatcher(files: [file, other]) { recorder in
                        try FS.writeInPlace(directory + "/.Environments.plist.swp", "swap")
                        try FS.writeInPlace(directory + "/notes.txt", "x")
                        try FS.move(directory + "/notes.txt", to: directory + "/notes2.txt")
                        try FS.delete(directory + "/notes2.txt")
                        try FS.delete(directory + "/.Environments.plist.swp")
                        try FS.makeDirectory(directory + "/sub")
                        try FS.writeInPlace(directory + "/Environments.plist.bak", "x")
                        #expect(await recorder.staysQuiet())
                        try FS.writeInPlace(file, "version 2")
                        #expect(await recorder.waitForChange(of: [file]))
                        #expect(recorder.changedPaths == [file])
                        await recorder.settle()
                        try FS.writeAtomically(other, "version 2")
                        #expect(await recorder.waitForChange(of: [other]))
                        #expect(recorder.changedPaths == [other])
                    }
                }
            }

            @Test func relativePathsAreReportedAsGiven() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    try FS.writeInPlace(file, "v1")
                    let relative = String(repeating: "../", count: 20) + file.dropFirst()
                    try await withWatcher(files: [relative]) { recorder in
                        try FS.writeInPlace(file, "version 2")
                        #expect(await recorder.waitForChange(of: [relative]))
                    }
                }
            }

            @Test func callbacksNeverOverlap() async throws {
                try await withTemporaryDirectory { directory in
                    let first = directory + "/a.plist"
                    let second = directory + "/b.plist"
                    let watcher = FileWatcher(
                        files: [first, second], directories: [], debounce: .milliseconds(20),
                        logger: testLogger)
                    let state = Locked((running: 0, maximum: 0, paths: Set<String>()))
                    let ready = Flag()
                    let task = Task {
                        try await watcher.run(onReady: { ready.set() }) { batch in
                            state.withLock {
                                $0.running += 1
                                $0.maximum = max($0.maximum, $0.running)
                            }
                            try? await Task.sleep(for: .milliseconds(200))
                            state.withLock {
                                $0.running -= 1
                                $0.paths.formUnion(batch.paths)
                            }
                        }
                    }
                    #expect(await waitUntil { ready.isSet })
                    // Separate bursts while the callback is still busy with the first one.
                    for index in 0..<4 {
                        try FS.writeInPlace(index.isMultiple(of: 2) ? first : second, "\(index)")
                        try await Task.sleep(for: .milliseconds(60))
                    }
                    #expect(await waitUntil { state.withLock { $0.paths == [first, second] } })
                    task.cancel()
                    try await task.value
                    #expect(state.withLock { $0.maximum } == 1)
                }
            }

            /// Cancelled once it watches, or at once (before watching starts), `run` ends and
            /// leaves no inotify instance behind.
            @Test(arguments: [true, false])
            func cancellationEndsRunAndClosesTheDescriptor(onceWatching: Bool) async throws {
                try await withTemporaryDirectory { directory in
                    let watcher = FileWatcher(
                        files: [directory + "/Environments.plist"], directories: [directory],
                        logger: testLogger)
                    let ready = Flag()
                    let finished = Flag()
                    let task = Task {
                        defer { finished.set() }
                        try await watcher.run(onReady: { ready.set() }, onChange: { _ in })
                    }
                    if onceWatching {
                        #expect(await waitUntil { ready.isSet })
                        #expect(try inotifyInstances(watching: directory).count == 1)
                    }
                    task.cancel()
                    #expect(await waitUntil { finished.isSet })
                    try await task.value
                    #expect(try inotifyInstances(watching: directory).isEmpty)
                }
            }

            @Test func aWatcherCanRunAgainAfterCancellation() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    try FS.writeInPlace(file, "v1")
                    try await withWatcher(files: [file]) { _ in }
                    try await withWatcher(files: [file]) { recorder in
                        try FS.writeInPlace(file, "version 2")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            /// The open descriptors of this process that are inotify instances watching `path`,
            /// found by its inode in `/proc/self/fdinfo` (lines `inotify wd:1 ino:1a2b sdev:…`).
            /// Counting every inotify instance of the process is no test: suites running at the
            /// same time open and close their own.
            private func inotifyInstances(watching path: String) throws -> [String] {
                let inode = try #require(
                    (try? FileManager.default.attributesOfItem(atPath: path))?[.systemFileNumber] as? Int)
                let watched = "ino:" + String(inode, radix: 16) + " "
                let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                return names.filter { name in
                    guard
                        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name))
                            == "anon_inode:inotify",
                        let info = try? String(contentsOfFile: "/proc/self/fdinfo/" + name, encoding: .utf8)
                    else { return false }
                    return info.split(separator: "\n").contains { $0.hasPrefix("inotify ") && $0.contains(watched) }
                }
            }
        }
    }
#endif
