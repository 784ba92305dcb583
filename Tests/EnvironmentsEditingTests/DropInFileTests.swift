import Foundation
import TestSupport
import Testing

@testable import EnvironmentsEditing

#if canImport(Glibc)
    import Glibc
#endif

/// ``DropInFile`` in a directory where others may write: what is already there under its
/// temporary files' names is never opened, written, followed or removed.
@Suite struct DropInFileTests {
    /// A configuration directory with an empty drop-in directory, removed afterwards.
    final class Directory {
        private let folder: TemporaryFolder
        var path: String { folder.path }
        init() throws {
            folder = try TemporaryFolder("envctl-dropin")
            try FileManager.default.createDirectory(
                atPath: path + "/Environments.plist.d", withIntermediateDirectories: true)
            try "<plist><dict/></plist>".write(toFile: path + "/Environments.plist", atomically: true, encoding: .utf8)
        }

        var dropIns: String { path + "/Environments.plist.d" }
        var file: DropInFile {
            DropInFile(path: dropIns + "/50-local.plist", mainFile: path + "/Environments.plist")
        }
    }

    @Test(
        "temporary names that are taken (a symbolic link, a hard link, a file) are passed over, their files unchanged")
    func aTakenTemporaryNameIsPassedOver() throws {
        let directory = try Directory()
        let outside = directory.path + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let linked = outside + "/linked", pointed = outside + "/pointed"
        try "hard-linked\n".write(toFile: linked, atomically: false, encoding: .utf8)
        try "pointed-to\n".write(toFile: pointed, atomically: false, encoding: .utf8)
        chmod(linked, 0o600)
        chmod(pointed, 0o640)
        let name = { (part: String) in directory.dropIns + "/.50-local.plist.\(part).envctl-new" }
        #expect(symlink(pointed, name("SYMLINK1")) == 0)
        #expect(link(linked, name("HARDLNK1")) == 0)
        try "someone's\n".write(toFile: name("REGULAR1"), atomically: false, encoding: .utf8)
        let before = try [linked, pointed, name("REGULAR1")].map(FileFingerprint.init)

        var file = directory.file
        var draws = ["SYMLINK1", "HARDLNK1", "REGULAR1", "FRESH001"].makeIterator()
        file.drawTemporaryPart = { draws.next() ?? "EXHAUSTED" }
        // Outside the lock, which would remove the regular file as a killed envctl's leftover.
        let (path, descriptor) = try file.makeTemporaryFile()
        close(descriptor)
        #expect(path == name("FRESH001"))
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_nlink == 1)
        #expect(status.st_mode & 0o777 == 0o600 && status.st_uid == geteuid())
        unlink(path)

        let after = try [linked, pointed, name("REGULAR1")].map(FileFingerprint.init)
        #expect(before == after)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: name("SYMLINK1"))) == pointed)
    }

    @Test("a change under the lock passes over taken names and removes only what a killed envctl leaves")
    func aReplacementPastTakenNames() throws {
        let directory = try Directory()
        let target = directory.path + "/target"
        try "precious\n".write(toFile: target, atomically: false, encoding: .utf8)
        chmod(target, 0o600)
        let name = { (part: String) in directory.dropIns + "/.50-local.plist.\(part).envctl-new" }
        #expect(symlink(target, name("SYMLINK1")) == 0)
        #expect(link(target, name("HARDLNK1")) == 0)
        try "half-written".write(toFile: name("LEFTOVER"), atomically: false, encoding: .utf8)
        let before = try FileFingerprint(target)

        var file = directory.file
        var draws = ["SYMLINK1", "HARDLNK1"].makeIterator()
        file.drawTemporaryPart = { draws.next() ?? DropInFile.randomTemporaryPart() }
        let contents = Data("<plist><dict/></plist>\n".utf8)
        try file.withLock { try file.replace(expecting: nil, with: contents) }

        #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == contents)
        let after = try FileFingerprint(target)
        #expect(before == after)
        // The killed envctl's file is gone; the links, not envctl's, are where they were.
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.dropIns).sorted()
        #expect(
            entries == [
                ".50-local.plist.HARDLNK1.envctl-new", ".50-local.plist.SYMLINK1.envctl-new", "50-local.plist",
            ], "\(entries)")
    }
}
