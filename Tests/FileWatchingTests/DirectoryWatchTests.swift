#if os(Linux)
    import Testing

    @testable import FileWatching

    extension FileWatchingTests {
        /// Changes inside a watched (drop-in) directory, and to the directory itself.
        @Suite struct DirectoryWatchTests {
            /// What `Environments.plist.d` is when the watcher starts.
            enum Start: Sendable {
                /// An empty directory.
                case empty
                /// A directory holding `10-local.plist`.
                case holdingAFile
                /// Not there yet.
                case missing
                /// An empty directory, beside `next`, an empty directory to replace it.
                case besideAReplacement
            }

            /// A change in the drop-in directory, or of it: where it starts from, and the steps.
            struct Change: Sendable, CustomTestStringConvertible {
                let testDescription: String
                var start = Start.holdingAFile
                /// The changes, given the temporary directory and the drop-in directory in it.
                let steps: @Sendable (_ directory: String, _ dropIn: String) -> [Step]
            }

            static let changes: [Change] = [
                Change(testDescription: "a file added", start: .empty) { _, dropIn in
                    [.reported { try FS.writeInPlace(dropIn + "/10-local.plist", "x") }]
                },
                Change(testDescription: "a file modified inside, in place and by a rename over it") { _, dropIn in
                    [
                        .reported { try FS.writeInPlace(dropIn + "/10-local.plist", "changed") },
                        .reported { try FS.writeAtomically(dropIn + "/10-local.plist", "renamed over") },
                    ]
                },
                Change(testDescription: "a file removed") { _, dropIn in
                    [.reported { try FS.delete(dropIn + "/10-local.plist") }]
                },
                Change(testDescription: "a file renamed inside") { _, dropIn in
                    [.reported { try FS.move(dropIn + "/10-local.plist", to: dropIn + "/20-local.plist") }]
                },
                Change(testDescription: "a file renamed into it, then out of it", start: .empty) { directory, dropIn in
                    [
                        .reported {
                            try FS.writeInPlace(directory + "/staged.plist", "x")
                            try FS.move(directory + "/staged.plist", to: dropIn + "/30-staged.plist")
                        },
                        .reported { try FS.move(dropIn + "/30-staged.plist", to: directory + "/disabled.plist") },
                    ]
                },
                // The new directory is watched from then on.
                Change(testDescription: "the directory created later", start: .missing) { _, dropIn in
                    [
                        .reported { try FS.makeDirectory(dropIn) },
                        .reported { try FS.writeInPlace(dropIn + "/10-local.plist", "x") },
                    ]
                },
                Change(testDescription: "the directory deleted, then created again") { _, dropIn in
                    [
                        .reported {
                            try FS.delete(dropIn + "/10-local.plist")
                            try FS.removeDirectory(dropIn)
                        },
                        .reported { try FS.makeDirectory(dropIn) },
                    ]
                },
                // The moved-away directory no longer matters; the one now in place does.
                Change(testDescription: "the directory replaced by a rename", start: .besideAReplacement) {
                    directory, dropIn in
                    [
                        .reported {
                            try FS.move(dropIn, to: directory + "/previous")
                            try FS.move(directory + "/next", to: dropIn)
                        },
                        .ignored { try FS.writeInPlace(directory + "/previous/a.plist", "x") },
                        .reported { try FS.writeInPlace(dropIn + "/a.plist", "x") },
                    ]
                },
            ]

            @Test(arguments: changes) func aChangeIsReportedAsTheDirectory(_ change: Change) async throws {
                try await withTemporaryDirectory { directory in
                    let dropIn = directory + "/Environments.plist.d"
                    if change.start != .missing { try FS.makeDirectory(dropIn) }
                    if change.start == .holdingAFile { try FS.writeInPlace(dropIn + "/10-local.plist", "x") }
                    if change.start == .besideAReplacement { try FS.makeDirectory(directory + "/next") }
                    try await withWatcher(directories: [dropIn]) { recorder in
                        try await recorder.expect([dropIn], after: change.steps(directory, dropIn))
                        #expect(recorder.batches.allSatisfy { $0.paths == [dropIn] })
                    }
                }
            }
        }
    }
#endif
