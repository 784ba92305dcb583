import Testing

@testable import FileWatching

extension FileWatchingTests {
    /// The polling fallback used where inotify is unavailable, exercised on every platform.
    @Suite struct PollingWatcherTests {
        private let polling = FileWatcher.Backend.polling(interval: .milliseconds(50))

        @Test func writeInPlaceAndRenameOver() async throws {
            try await withWatchedFile(backend: polling) { file, recorder in
                try FS.writeInPlace(file, "version 2")
                #expect(await recorder.waitForChange(of: [file]))
                await recorder.settle()
                try FS.writeAtomically(file, "version three")
                #expect(await recorder.waitForChange(of: [file]))
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
                    try FS.retarget(file, to: "b")
                    #expect(await recorder.waitForChange(of: [file]))
                    try FS.writeInPlace(other, "new")
                    #expect(await recorder.waitForChange(of: [other]))
                }
            }
        }

        @Test func dropInDirectoryEntries() async throws {
            try await withTemporaryDirectory { directory in
                let dropIn = directory + "/Environments.plist.d"
                try await withWatcher(directories: [dropIn], backend: polling) { recorder in
                    try FS.makeDirectory(dropIn)
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    try FS.writeInPlace(dropIn + "/a.plist", "a")
                    #expect(await recorder.waitForChange(of: [dropIn]))
                    await recorder.settle()
                    try FS.move(dropIn + "/a.plist", to: dropIn + "/b.plist")
                    #expect(await recorder.waitForChange(of: [dropIn]))
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
