import Foundation
import TestSupport
import Testing

@testable import EnvironmentsEditing

#if canImport(Glibc)
    import Glibc
#endif

/// ``FileTransaction`` on real files: every file changes, or none does.
@Suite struct EditingFileTransactionTests {
    final class Directory {
        private let folder: TemporaryFolder
        var path: String { folder.path }
        init() throws { folder = try TemporaryFolder("editing-transaction") }

        func file(_ name: String) -> DropInFile {
            var file = DropInFile(path: path + "/" + name, mainFile: path + "/" + name)
            file.fixedNewFilePermissions = .init(owner: geteuid(), group: getegid(), mode: 0o644, from: nil)
            return file
        }

        func contents(_ name: String) -> String? {
            FileManager.default.contents(atPath: path + "/" + name).map { String(decoding: $0, as: UTF8.self) }
        }

        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    @Test("a change to two files replaces both, and leaves no journal or copies")
    func commitsBoth() throws {
        let directory = try Directory()
        try "old a".write(toFile: directory.path + "/a.plist", atomically: true, encoding: .utf8)
        let a = directory.file("a.plist")
        let b = directory.file("b.plist")
        try a.withLock {
            try FileTransaction(journalDirectory: directory.path, command: "test").commit([
                .init(file: a, expected: Data("old a".utf8), contents: Data("new a".utf8)),
                .init(file: b, expected: nil, contents: Data("new b".utf8)),
            ])
        }
        #expect(directory.contents("a.plist") == "new a")
        #expect(directory.contents("b.plist") == "new b")
        #expect(directory.names == ["a.plist", "b.plist"])
    }

    @Test("a file that no longer holds what was read changes no file")
    func changedFileChangesNothing() throws {
        let directory = try Directory()
        try "old a".write(toFile: directory.path + "/a.plist", atomically: true, encoding: .utf8)
        try "someone else's b".write(toFile: directory.path + "/b.plist", atomically: true, encoding: .utf8)
        let a = directory.file("a.plist")
        let b = directory.file("b.plist")
        #expect(throws: FileTransaction.Changed.self) {
            try a.withLock {
                try FileTransaction(journalDirectory: directory.path, command: "test").commit([
                    .init(file: a, expected: Data("old a".utf8), contents: Data("new a".utf8)),
                    .init(file: b, expected: Data("old b".utf8), contents: Data("new b".utf8)),
                ])
            }
        }
        #expect(directory.contents("a.plist") == "old a")
        #expect(directory.contents("b.plist") == "someone else's b")
        #expect(directory.names == ["a.plist", "b.plist"])
    }
}
