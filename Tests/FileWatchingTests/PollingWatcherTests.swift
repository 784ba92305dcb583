import Testing

@testable import FileWatching

extension FileWatchingTests {
    /// The polling fallback used where inotify is unavailable, exercised on every platform.
    @Suite struct PollingWatcherTests {
        private let polling = FileWatcher.Backend.polling(interval: .milliseconds(50))

        @Test func writeInPlaceAndRenameOver() async throws {
            try await withWatchedFile(backend: polling) { file, recorder in
                try await recorder.expect(
                    [file], after: .reported { try FS.writeInPlace(file, "version 2") },
                    .reported { try FS.writeAtomically(file, "version three") })
            }
        }

        @Test func symlinkRetargetedAndFileCreated() async throws {
            try await withTemporaryDirectory { directory in
                let file = directory + "/Environments.plist"
                let other = directory + "/Other.plist"
                try FS.writeInPlace(directory + "/a", "a")
                try FS.writeInPlace(directory + "/b", "b")
                try FS.makeSymlink("a", at: file)
                try await withWatcher(files: [file, other], backend: polling) { recorder in
                    try await recorder.expect([file], after: .reported { try FS.retarget(file, to: "b") })
                    try await recorder.expect([other], after: .reported { try FS.writeInPlace(other, "new") })
                }
            }
        }

        @Test func dropInDirectoryEntries() async throws {
            try await withTemporaryDirectory { directory in
                let dropIn = directory + "/Environments.plist.d"
                try await withWatcher(directories: [dropIn], backend: polling) { recorder in
                    try await recorder.expect(
                        [dropIn], after: .reported { try FS.makeDirectory(dropIn) },
                        .reported { try FS.writeInPlace(dropIn + "/a.plist", "a") },
                        .reported { try FS.move(dropIn + "/a.plist", to: dropIn + "/b.plist") })
                }
            }
        }

        @Test func nothingChangedStaysQuiet() async throws {
            try await withTemporaryDirectory { directory in
                let file = directory + "/Environments.plist"
                try FS.writeInPlace(file, "v1")
                try await withWatcher(files: [file], backend: polling) { recorder in
                    try FS.writeInPlace(directory + "/unrelated", "x")
                    #expect(await recorder.staysQuiet())
                }
            }
        }
    }
}
