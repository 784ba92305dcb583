#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    package import Glibc
#elseif canImport(Musl)
    package import Musl
#elseif canImport(Darwin)
    package import Darwin
#endif

/// The journal of a change that spans files (`envctl migrate`, `envctl credential set`): which
/// files it replaces, where their new contents wait, and where their old contents are kept, so
/// that the change lands whole or not at all.
///
/// `envctl` writes it, as `.envctl-transaction` in the directory of the lock it holds (for a
/// configuration, its drop-in directory), once every new file and every copy of an old one is
/// written and synced, and removes it once every file is in place; a journal that is there
/// while no `envctl` holds the lock was left by one that was killed, and the next completes it.
///
/// While a configuration's journal is there, loading reads each file it names as it was before
/// the change (from the copy of its old contents; a file the change creates is not there yet),
/// and warns (``ConfigurationWarning/Code/changeUnderWay``): a daemon never applies a state in
/// between. The journal's removal is a change of the configuration, which a daemon's file
/// watcher sees.
package struct TransactionJournal: Codable, Sendable, Equatable {
    /// The journal's file name, in the lock's directory.
    package static let fileName = ".envctl-transaction"
    /// The suffix of a file that holds a target's new contents until it is renamed over it.
    package static let newSuffix = ".envctl-new"
    /// The suffix of a file that holds a target's old contents until the change is complete.
    package static let oldSuffix = ".envctl-old"
    /// The largest journal read: far more than the paths of any change need.
    package static let maximumSize = 1 << 20

    /// One file the change replaces or creates.
    package struct Entry: Codable, Sendable, Equatable {
        /// The file, as an absolute path.
        package var target: String
        /// Its new contents, beside it (hidden, ``TransactionJournal/newSuffix``), until renamed
        /// over it.
        package var new: String
        /// A copy of its old contents, beside it (hidden, ``TransactionJournal/oldSuffix``), or
        /// `nil` when the change creates it.
        package var old: String?

        /// Creates an entry.
        package init(target: String, new: String, old: String?) {
            self.target = target
            self.new = new
            self.old = old
        }

        /// Whether the entry names what `envctl` writes: absolute paths, the new and old files
        /// hidden beside the target with their suffixes. A journal with any other entry is
        /// not followed.
        var isWellFormed: Bool {
            let directory = PathNames.directory(of: target)
            func beside(_ path: String, suffix: String) -> Bool {
                let name = PathNames.lastComponent(of: path)
                return PathNames.directory(of: path) == directory && name.hasPrefix(".")
                    && name.hasSuffix(suffix) && !name.contains("/")
            }
            return target.hasPrefix("/") && !target.contains("/../") && !target.hasSuffix("/..")
                && beside(new, suffix: TransactionJournal.newSuffix)
                && (old.map { beside($0, suffix: TransactionJournal.oldSuffix) } ?? true)
        }
    }

    /// The format's version: 1.
    package var version = 1
    /// The command that makes the change, for messages: `envctl migrate`.
    package var command: String
    /// The process that makes it.
    package var process: Int32
    /// Whether the change is being undone (a file could not be replaced) rather than completed.
    package var rollingBack = false
    /// The files, in the order they are replaced.
    package var entries: [Entry]

    /// Creates a journal.
    package init(command: String, process: Int32, entries: [Entry]) {
        self.command = command
        self.process = process
        self.entries = entries
    }

    /// The journal's path in `directory`.
    package static func path(in directory: String) -> String {
        PathNames.join(directory, fileName)
    }

    /// The journal in `directory`, or `nil` when there is none.
    ///
    /// - Throws: ``EnvironmentError/Code/fileUnreadable`` when it cannot be read, is not a
    ///   journal `envctl` writes, or names a file outside what such a journal can name.
    package static func read(in directory: String) throws(EnvironmentError)
        -> TransactionJournal?
    {
        try readWithOwner(in: directory)?.journal
    }

    /// The journal in `directory` and the user it belongs to, or `nil` when there is none: read
    /// through one descriptor (a symbolic link is not followed), so the owner is the owner of
    /// what was read.
    ///
    /// - Throws: As ``read(in:)``; also when it is a symbolic link or not a regular file.
    package static func readWithOwner(in directory: String) throws(EnvironmentError)
        -> (journal: TransactionJournal, owner: uid_t)?
    {
        let path = path(in: directory)
        // Nothing there, or a drop-in directory that cannot be looked into (not a directory, no
        // permission): the drop-in directory's listing reports that, not the journal.
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }  // removed meanwhile: the change is complete
            throw notAJournal(path)
        }
        defer { close(descriptor) }
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size <= maximumSize
        else { throw notAJournal(path) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while data.count <= maximumSize {
            let count = buffer.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count >= 0 else { throw notAJournal(path) }
            if count == 0 { break }
            data.append(contentsOf: buffer[..<count])
        }
        guard data.count <= maximumSize,
            let journal = try? JSONDecoder().decode(TransactionJournal.self, from: data), journal.version == 1,
            journal.entries.allSatisfy(\.isWellFormed)
        else { throw notAJournal(path) }
        return (journal, status.st_uid)
    }

    private static func notAJournal(_ path: String) -> EnvironmentError {
        EnvironmentError(
            .fileUnreadable, "is not the journal of a change that envctl makes", file: path,
            hint:
                "A change that spans files was under way; look at what the file holds, remove it, and check every file it names (envctl check)"
        )
    }

    /// The first file the journal names that `mayName` refuses (each target with its
    /// directory's symbolic links resolved, ``resolved(_:)``), or `nil` when it names only
    /// files `mayName` accepts. The new and old files are beside their targets
    /// (``Entry/isWellFormed``).
    package func fileOutside(_ mayName: (String) -> Bool) -> String? {
        entries.first { !mayName(Self.resolved($0.target)) }?.target
    }

    /// Whether `path` (resolved, ``resolved(_:)``) is one of the configuration's files: its
    /// main file, or a drop-in (`*.plist`, not hidden) directly in its drop-in directory. What a
    /// configuration's journal may name.
    package static func isConfigurationFile(_ path: String, mainFile: String, dropInDirectory: String) -> Bool {
        if path == resolved(mainFile) { return true }
        let directory = PathNames.directory(of: path)
        let resolvedDropIns = realpath(dropInDirectory, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
        return (directory == resolvedDropIns || directory == dropInDirectory)
            && ConfigurationLocation.isDropInFileName(PathNames.lastComponent(of: path))
    }

    /// `path` with its directory's symbolic links resolved (`realpath(3)`), or as it is when
    /// the directory cannot be resolved: how a loader matches the journal's targets to its
    /// files.
    package static func resolved(_ path: String) -> String {
        let directory = PathNames.directory(of: path)
        guard let real = realpath(directory.isEmpty ? "." : directory, nil) else { return path }
        defer { free(real) }
        return PathNames.join(String(cString: real), PathNames.lastComponent(of: path))
    }

    /// The journal as written: JSON, one object.
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return try encoder.encode(self)
    }

    /// The warning a load gives while the journal is there, naming what completes the change.
    func warning(journalPath: String, completion: String) -> ConfigurationWarning {
        ConfigurationWarning(
            .changeUnderWay,
            "a change that spans files (\(command), process \(process)) is under way or was interrupted: \(entries.count) file\(entries.count == 1 ? " is" : "s are") read as before it until it is done",
            file: journalPath,
            hint:
                "If no envctl runs, \(completion) completes it (or any envctl set, unset or edit of this configuration)"
        )
    }
}

/// `read(2)`, by a name no member of ``TransactionJournal`` hides.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
