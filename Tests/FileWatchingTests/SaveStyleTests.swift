#if os(Linux)
    import Foundation
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Every way of saving a watched file is reported.
        @Suite struct SaveStyleTests {
            /// A way of saving the watched file: the layout it starts from and the changes it makes.
            struct Save: Sendable, CustomTestStringConvertible {
                let testDescription: String
                /// The watched file, relative to the temporary directory.
                var file = "Environments.plist"
                /// Lays out the temporary directory before the watcher starts; by default, writes
                /// the watched file.
                var layout: @Sendable (_ directory: String, _ file: String) throws -> Void = {
                    try FS.writeInPlace($1, "v1")
                }
                /// The changes, given the temporary directory and the watched file.
                let steps: @Sendable (_ directory: String, _ file: String) -> [Step]
            }

            static let saves: [Save] = [
                Save(testDescription: "written in place") { _, file in
                    [.reported { try FS.writeInPlace(file, "version 2") }]
                },
                Save(testDescription: "appended to") { _, file in
                    [.reported { try FS.writeInPlace(file, " more", append: true) }]
                },
                // The watch follows the new inode: a second save is seen too.
                Save(testDescription: "a temporary file renamed over it, twice") { _, file in
                    [
                        .reported { try FS.writeAtomically(file, "version 2") },
                        .reported { try FS.writeAtomically(file, "version 3") },
                    ]
                },
                Save(testDescription: "renamed away, then a new file written (vim with backupcopy=no)") { _, file in
                    let backup = file + "~"
                    return [
                        .reported {
                            try FS.move(file, to: backup)
                            try FS.writeInPlace(file, "version 2")
                            try FS.delete(backup)
                        },
                        .reported { try FS.writeInPlace(file, "version 3") },
                    ]
                },
                Save(testDescription: "deleted, then recreated later") { _, file in
                    [.reported { try FS.delete(file) }, .reported { try FS.writeInPlace(file, "v2") }]
                },
                Save(testDescription: "missing at the start, then created", layout: { _, _ in }) { _, file in
                    [
                        .reported { try FS.writeInPlace(file, "v1") },
                        .reported { try FS.writeInPlace(file, "version 2") },
                    ]
                },
                Save(
                    testDescription: "its directories missing at the start, then created with the file",
                    file: "etc/app/Environments.plist", layout: { _, _ in }
                ) { directory, file in
                    [
                        .reported { try FS.makeDirectory(directory + "/etc") },
                        .reported { try FS.makeDirectory(directory + "/etc/app") },
                        .reported { try FS.writeInPlace(file, "v1") },
                        .reported { try FS.writeInPlace(file, "version 2") },
                    ]
                },
                // The old target no longer matters; the new one does.
                Save(
                    testDescription: "a symbolic link retargeted", file: "conf/Environments.plist",
                    layout: { directory, file in
                        try makeTargets(in: directory + "/targets")
                        try FS.makeDirectory(directory + "/conf")
                        try FS.makeSymlink("../targets/a.plist", at: file)
                    }
                ) { directory, file in
                    [
                        .reported { try FS.retarget(file, to: "../targets/b.plist") },
                        .ignored { try FS.writeInPlace(directory + "/targets/a.plist", "a2") },
                        .reported { try FS.writeInPlace(directory + "/targets/b.plist", "b2") },
                    ]
                },
                Save(
                    testDescription: "a symbolic link retargeted with ln -sfn",
                    layout: { directory, file in
                        try makeTargets(in: directory + "/targets")
                        try FS.makeSymlink("targets/a.plist", at: file)
                    }
                ) { _, file in
                    [.reported { try FS.run("/bin/ln", ["-sfn", "targets/b.plist", file]) }]
                },
                Save(
                    testDescription: "the target of a symbolic link changed", file: "conf/Environments.plist",
                    layout: { directory, file in
                        try makeTargets(in: directory + "/targets")
                        try FS.makeDirectory(directory + "/conf")
                        try FS.makeSymlink(directory + "/targets/a.plist", at: file)
                    }
                ) { directory, _ in
                    let target = directory + "/targets/a.plist"
                    return [
                        .reported { try FS.writeInPlace(target, "in place") },
                        .reported { try FS.writeAtomically(target, "renamed over") },
                        .reported { try FS.delete(target) },
                        .reported { try FS.writeInPlace(target, "recreated") },
                    ]
                },
                // Without deleting the old directory, the `..data` rename alone must be seen.
                Save(
                    testDescription: "a ConfigMap's ..data swapped alone",
                    layout: { directory, _ in
                        _ = try makeConfigMapVolume(in: directory, generation: "..1")
                        try addConfigMapGeneration("..2", contents: "v2", in: directory)
                    }
                ) { directory, _ in
                    [.reported { try FS.retarget(directory + "/..data", to: "..2") }]
                },
            ]

            @Test(arguments: saves) func aSaveIsReported(_ save: Save) async throws {
                try await withTemporaryDirectory { directory in
                    let file = directory + "/" + save.file
                    try save.layout(directory, file)
                    try await withWatcher(files: [file]) { recorder in
                        try await recorder.expect([file], after: save.steps(directory, file))
                        #expect(recorder.batches.allSatisfy { $0.paths == [file] && !$0.overflowed })
                    }
                }
            }

            @Test func sedInPlace() async throws {
                try await withWatchedFile(contents: "value=1\n") { file, recorder in
                    try await recorder.expect(
                        [file], after: .reported { try FS.run("/bin/sed", ["-i", "s/1/2/", file]) })
                    #expect(try String(contentsOfFile: file, encoding: .utf8) == "value=2\n")
                }
            }

            @Test func kubernetesConfigMapDataSwap() async throws {
                try await withTemporaryDirectory { directory in
                    let old = "..2026_11_21_10_00_00.123"
                    let new = "..2026_11_21_10_05_00.456"
                    let file = try Self.makeConfigMapVolume(in: directory, generation: old)
                    try await withWatcher(files: [file]) { recorder in
                        // The steps of kubelet's atomic writer: write the new generation, point
                        // `..data` at it by a rename, delete the old one.
                        let swap = Step.reported {
                            try Self.addConfigMapGeneration(new, contents: "v2", in: directory)
                            try FS.makeSymlink(new, at: directory + "/..data_tmp")
                            try FS.move(directory + "/..data_tmp", to: directory + "/..data")
                            try FS.delete(directory + "/\(old)/Environments.plist")
                            try FS.removeDirectory(directory + "/" + old)
                        }
                        try await recorder.expect([file], after: swap)
                        #expect(try String(contentsOfFile: file, encoding: .utf8) == "v2")
                        await recorder.settle()
                        // Watches now follow the new data directory.
                        try await recorder.expect(
                            [file],
                            after: .reported { try FS.writeInPlace(directory + "/\(new)/Environments.plist", "v3") })
                    }
                }
            }

            /// Writes `a.plist` and `b.plist`, targets for a symbolic link, into the new
            /// directory `directory`.
            private static func makeTargets(in directory: String) throws {
                try FS.makeDirectory(directory)
                try FS.writeInPlace(directory + "/a.plist", "a")
                try FS.writeInPlace(directory + "/b.plist", "b")
            }

            /// Lays out `directory` as kubelet's atomic writer does for a ConfigMap volume: the
            /// data in the directory `generation`, `..data` a link to it, and
            /// `Environments.plist` a link through `..data`. Returns the path of
            /// `Environments.plist`.
            private static func makeConfigMapVolume(in directory: String, generation: String) throws -> String {
                try addConfigMapGeneration(generation, contents: "v1", in: directory)
                try FS.makeSymlink(generation, at: directory + "/..data")
                let file = directory + "/Environments.plist"
                try FS.makeSymlink("..data/Environments.plist", at: file)
                return file
            }

            /// Writes a generation of a ConfigMap volume: `Environments.plist`, holding
            /// `contents`, in the new directory `directory/generation`.
            private static func addConfigMapGeneration(_ generation: String, contents: String, in directory: String)
                throws
            {
                try FS.makeDirectory(directory + "/" + generation)
                try FS.writeInPlace(directory + "/\(generation)/Environments.plist", contents)
            }
        }
    }
#endif
