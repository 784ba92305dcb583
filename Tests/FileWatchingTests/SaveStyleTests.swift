#if os(Linux)
    import Foundation
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Every way of saving a watched file is reported.
        @Suite struct SaveStyleTests {
            @Test func writeInPlace() async throws {
                try await withWatchedFile { file, recorder in
                    try FS.writeInPlace(file, "version 2")
                    #expect(await recorder.waitForChange(of: [file]))
                    #expect(recorder.batches.allSatisfy { $0.paths == [file] && !$0.overflowed })
                }
            }

            @Test func append() async throws {
                try await withWatchedFile { file, recorder in
                    try FS.writeInPlace(file, " more", append: true)
                    #expect(await recorder.waitForChange(of: [file]))
                }
            }

            @Test func temporaryFileRenamedOver() async throws {
                try await withWatchedFile { file, recorder in
                    try FS.writeAtomically(file, "version 2")
                    #expect(await recorder.waitForChange(of: [file]))
                    await recorder.settle()
                    // The watch follows the new inode: a second save is seen too.
                    try FS.writeAtomically(file, "version 3")
                    #expect(await recorder.waitForChange(of: [file]))
                }
            }

            @Test func sedInPlace() async throws {
                try await withWatchedFile(contents: "value=1\n") { file, recorder in
                    try FS.run("/bin/sed", ["-i", "s/1/2/", file])
                    #expect(await recorder.waitForChange(of: [file]))
                    #expect(try String(contentsOfFile: file, encoding: .utf8) == "value=2\n")
                }
            }

            @Test func originalRenamedAwayThenNewFileWritten() async throws {
                try await withWatchedFile { file, recorder in
                    // vim with `backupcopy=no`: F -> F~, write a new F, delete F~.
                    try FS.move(file, to: file + "~")
                    try FS.writeInPlace(file, "version 2")
                    try FS.delete(file + "~")
                    #expect(await recorder.waitForChange(of: [file]))
                    await recorder.settle()
                    try FS.writeInPlace(file, "version 3")
                    #expect(await recorder.waitForChange(of: [file]))
                }
            }

            @Test func deletedThenRecreatedLater() async throws {
                try await withWatchedFile { file, recorder in
                    try FS.delete(file)
                    #expect(await recorder.waitForChange(of: [file]))
                    await recorder.settle()
                    try FS.writeInPlace(file, "v2")
                    #expect(await recorder.waitForChange(of: [file]))
                }
            }

            @Test func missingAtStartThenCreated() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/Environments.plist"
                    try await withWatcher(files: [file]) { recorder in
                        try FS.writeInPlace(file, "v1")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.writeInPlace(file, "version 2")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            @Test func directoryMissingAtStartThenCreatedWithTheFile() async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/etc/app/Environments.plist"
                    try await withWatcher(files: [file]) { recorder in
                        try FS.makeDirectory(directory + "/etc")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.makeDirectory(directory + "/etc/app")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.writeInPlace(file, "v1")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.writeInPlace(file, "version 2")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            @Test func symlinkRetargeted() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.makeDirectory(directory + "/targets")
                    try FS.makeDirectory(directory + "/conf")
                    try FS.writeInPlace(directory + "/targets/a.plist", "a")
                    try FS.writeInPlace(directory + "/targets/b.plist", "b")
                    let file = directory + "/conf/Environments.plist"
                    try FS.makeSymlink("../targets/a.plist", at: file)
                    try await withWatcher(files: [file]) { recorder in
                        try FS.retarget(file, to: "../targets/b.plist")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        // The old target no longer matters; the new one does.
                        try FS.writeInPlace(directory + "/targets/a.plist", "a2")
                        #expect(await recorder.staysQuiet())
                        try FS.writeInPlace(directory + "/targets/b.plist", "b2")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            @Test func symlinkRetargetedWithLn() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.writeInPlace(directory + "/a.plist", "a")
                    try FS.writeInPlace(directory + "/b.plist", "b")
                    let file = directory + "/Environments.plist"
                    try FS.makeSymlink("a.plist", at: file)
                    try await withWatcher(files: [file]) { recorder in
                        try FS.run("/bin/ln", ["-sfn", "b.plist", file])
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            @Test func symlinkTargetChanged() async throws {
                try await withTemporaryDirectory { directory in
                    try FS.makeDirectory(directory + "/targets")
                    try FS.makeDirectory(directory + "/conf")
                    let target = directory + "/targets/a.plist"
                    try FS.writeInPlace(target, "a")
                    let file = directory + "/conf/Environments.plist"
                    try FS.makeSymlink(target, at: file)
                    try await withWatcher(files: [file]) { recorder in
                        try FS.writeInPlace(target, "in place")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.writeAtomically(target, "renamed over")
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.delete(target)
                        #expect(await recorder.waitForChange(of: [file]))
                        await recorder.settle()
                        try FS.writeInPlace(target, "recreated")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            @Test func kubernetesConfigMapDataSwap() async throws {
                try await withTemporaryDirectory { directory in
                    // The layout kubelet's atomic writer creates for a ConfigMap volume.
                    let old = "..2026_11_21_10_00_00.123"
                    let new = "..2026_11_21_10_05_00.456"
                    try FS.makeDirectory(directory + "/" + old)
                    try FS.writeInPlace(directory + "/\(old)/Environments.plist", "v1")
                    try FS.makeSymlink(old, at: directory + "/..data")
                    let file = directory + "/Environments.plist"
                    try FS.makeSymlink("..data/Environments.plist", at: file)
                    try await withWatcher(files: [file]) { recorder in
                        try FS.makeDirectory(directory + "/" + new)
                        try FS.writeInPlace(directory + "/\(new)/Environments.plist", "v2")
                        try FS.makeSymlink(new, at: directory + "/..data_tmp")
                        try FS.move(directory + "/..data_tmp", to: directory + "/..data")
                        try FS.delete(directory + "/\(old)/Environments.plist")
                        try FS.removeDirectory(directory + "/" + old)
                        #expect(await recorder.waitForChange(of: [file]))
                        #expect(try String(contentsOfFile: file, encoding: .utf8) == "v2")
                        await recorder.settle()
                        // Watches now follow the new data directory.
                        try FS.writeInPlace(directory + "/\(new)/Environments.plist", "v3")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }

            @Test func configMapSwapAloneTriggers() async throws {
                try await withTemporaryDirectory { directory in
                    // Without deleting the old directory, the `..data` rename alone must be seen.
                    try FS.makeDirectory(directory + "/..1")
                    try FS.makeDirectory(directory + "/..2")
                    try FS.writeInPlace(directory + "/..1/Environments.plist", "v1")
                    try FS.writeInPlace(directory + "/..2/Environments.plist", "v2")
                    try FS.makeSymlink("..1", at: directory + "/..data")
                    let file = directory + "/Environments.plist"
                    try FS.makeSymlink("..data/Environments.plist", at: file)
                    try await withWatcher(files: [file]) { recorder in
                        try FS.retarget(directory + "/..data", to: "..2")
                        #expect(await recorder.waitForChange(of: [file]))
                    }
                }
            }
        }
    }
#endif
