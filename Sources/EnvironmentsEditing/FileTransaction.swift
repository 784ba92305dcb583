import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// A change to several files that lands whole or not at all: what `migrate` and
/// `credential set` write through.
///
/// **Steps.** Call it holding the lock of every directory it writes in (``DropInFile/withLock(_:)``);
/// the journal goes in ``journalDirectory``, the first lock's directory.
/// 1. Prepare: for each file, its new contents go to a hidden file beside it
///    (`.NAME.XXXXXXXX.envctl-new`) and a copy of its old contents to another
///    (`.NAME.XXXXXXXX.envctl-old`), each with the file's owner, group, mode and extended
///    attributes, synced. A file that no longer holds what was read, or any failure, removes
///    them all: nothing changed.
/// 2. The journal (``TransactionJournal``, `.envctl-transaction`) names every file, its new
///    file and its old copy; it is written beside the lock as a file of its own, synced and
///    renamed into place, and the directory synced. From here the change is decided.
/// 3. Each new file is renamed over its file, in order; then every directory is synced.
/// 4. The journal is removed (its directory synced), then the old copies.
///
/// A rename that fails (a file made immutable, a directory put in its place) undoes the change:
/// the journal says so first (``TransactionJournal/rollingBack``), then each file replaced
/// gets its old copy back (one the change created is removed); the others were never touched.
///
/// **Interrupted.** An `envctl` killed after step 2 leaves the journal; the kernel releases its
/// lock. The next `envctl` that takes the lock (`set`, `unset`, `edit`, `migrate`,
/// `migrate --resume`, `credential set`) completes the change first (``recover(in:scope:note:)``): every
/// new file still there is renamed over its file, and the rest of step 4 follows; a change
/// that was being undone is undone. Meanwhile a loader reads each file the journal names as it
/// was before the change: the daemon never applies a state in between. One killed before
/// step 2 leaves only hidden files, which the next removes.
package struct FileTransaction {
    /// One file to replace (or create).
    package struct Change {
        /// The file, with its lock's directory and the permissions a new one gets.
        package var file: DropInFile
        /// What it holds now, as read under the lock; `nil`: it does not exist.
        package var expected: Data?
        /// What it is to hold.
        package var contents: Data

        package init(file: DropInFile, expected: Data?, contents: Data) {
            self.file = file
            self.expected = expected
            self.contents = contents
        }
    }

    /// The directory of the lock held, where the journal goes.
    package let journalDirectory: String
    /// The command, for the journal and messages: `envctl migrate`.
    package let command: String
    /// Where notes go (``DropInFile/note``).
    package var note: NoteSink = EditingNotes.log

    package init(journalDirectory: String, command: String, note: @escaping NoteSink = EditingNotes.log) {
        self.journalDirectory = journalDirectory
        self.command = command
        self.note = note
    }

    /// The environment variable that makes a transaction wait this many milliseconds after each
    /// rename (step 3). For tests only, which kill `envctl` in the middle of a change.
    package static let testPauseVariable = "ENVCTL_TEST_PAUSE_BETWEEN_RENAMES_MS"

    /// Called after the rename of the file at each index (step 3): waits as
    /// ``testPauseVariable`` says. A test in the process puts something in the way instead.
    package var afterRename: (Int) -> Void = { _ in
        guard let text = ProcessInfo.processInfo.environment[FileTransaction.testPauseVariable],
            let milliseconds = UInt32(text)
        else { return }
        usleep(min(milliseconds, 600_000) * 1000)
    }

    /// A file that no longer holds what was read: someone wrote it without envctl's lock.
    package struct Changed: Error {
        /// The file.
        package var path: String
    }

    /// Replaces every file with its new contents, all or none (the steps above).
    ///
    /// - Throws: ``Changed`` when a file no longer holds ``Change/expected`` (nothing was
    ///   written); a ``Failure`` when a file cannot be written (nothing was written) or a
    ///   rename fails (the files replaced before it got their old contents back).
    package func commit(_ changes: [Change]) throws {
        // 1. Prepare.
        var entries: [TransactionJournal.Entry] = []
        func removePrepared() {
            for entry in entries {
                unlink(entry.new)
                if let old = entry.old { unlink(old) }
            }
        }
        do {
            for change in changes {
                let current = try change.file.read()
                guard current?.contents == change.expected else { throw Changed(path: change.file.path) }
                let new = try change.file.writeTemporaryFile(change.contents, keeping: current)
                FaultInjection.step()
                entries.append(TransactionJournal.Entry(target: change.file.path, new: new, old: nil))
                if let current {
                    entries[entries.count - 1].old = try change.file.writeTemporaryFile(
                        current.contents, keeping: current, suffix: TransactionJournal.oldSuffix)
                    FaultInjection.step()
                }
            }
            // A file may have changed while the others were written.
            for change in changes where try change.file.read()?.contents != change.expected {
                throw Changed(path: change.file.path)
            }
            // 2. The journal.
            var journal = TransactionJournal(command: command, process: getpid(), entries: entries)
            FaultInjection.step()
            try write(journal)
            FaultInjection.step()
            // 3. The renames.
            for (index, entry) in entries.enumerated() {
                guard FaultInjection.failsRename(index) == false, rename(entry.new, entry.target) == 0 else {
                    let error = FaultInjection.failsRename(index) ? EACCES : errno
                    journal.rollingBack = true
                    try? write(journal)
                    FaultInjection.step()
                    Self.complete(journal, in: journalDirectory)
                    throw Failure(
                        .fileUnwritable,
                        "cannot replace \(entry.target): \(DropInFile.describe(error)); the files replaced before it have their old contents again, nothing was changed"
                    )
                }
                FaultInjection.step()
                afterRename(index)
            }
            // 4. Done.
            Self.complete(journal, in: journalDirectory)
        } catch {
            removePrepared()
            throw error
        }
    }

    /// Writes the journal into place: a file of its own, synced, renamed, the directory synced.
    private func write(_ journal: TransactionJournal) throws {
        let path = TransactionJournal.path(in: journalDirectory)
        var file = DropInFile(path: path, mainFile: path)
        file.note = note
        file.fixedNewFilePermissions = .init(owner: geteuid(), group: getegid(), mode: 0o644, from: nil)
        let temporary = try file.writeTemporaryFile(try journal.encoded(), keeping: nil)
        FaultInjection.step()
        guard rename(temporary, path) == 0 else {
            let error = errno
            unlink(temporary)
            throw Failure(.fileUnwritable, "cannot write \(path): \(DropInFile.describe(error)); nothing was changed")
        }
        DropInFile.syncDirectory(journalDirectory)
    }

    /// Completes the change the journal in `directory` describes, left by an `envctl` that was
    /// killed (or undoes it, when it was being undone), and says so on stderr. Call it holding
    /// the directory's lock: no other `envctl` then makes a change there.
    ///
    /// The journal is an instruction that `envctl`, often root, follows: it is followed only
    /// when it belongs to root or to `envctl`'s own user (whom `envctl` trusts to write a
    /// directory, as for sockets and configuration directories), and when every file it names
    /// is one `mayName` accepts (for a configuration, its `Environments.plist` and drop-ins:
    /// ``JournalScope``). Otherwise nothing is touched.
    ///
    /// - Throws: A ``Failure`` that names the journal when it cannot be read, belongs to another
    ///   user or names another file; nothing was written then.
    package static func recover(
        in directory: String, scope: JournalScope, note: NoteSink = EditingNotes.log
    ) throws {
        let path = TransactionJournal.path(in: directory)
        let found: (journal: TransactionJournal, owner: uid_t)?
        do {
            found = try TransactionJournal.readWithOwner(in: directory)
        } catch {
            throw Failure(.fileUnreadable, "\(error); nothing was written", file: path)
        }
        guard let (journal, owner) = found else { return }
        let trusted: Set<uid_t> = [0, geteuid()]
        guard trusted.contains(owner) else {
            throw Failure(
                .fileUnreadable,
                "refusing the journal \(path): it belongs to uid \(owner), not to \(trusted.sorted().map { $0 == 0 ? "root" : "uid \($0)" }.joined(separator: " or ")), who alone may write one that envctl follows; nothing was written. Look at what it holds, remove it, and check every file it names (envctl check)",
                file: path)
        }
        if let outside = journal.fileOutside(scope.mayName) {
            throw Failure(
                .fileUnreadable,
                "refusing the journal \(path): it names \(outside), which is not \(scope.description); nothing was written. Look at what it holds, remove it, and check every file it names (envctl check)",
                file: path)
        }
        let files = journal.entries.map(\.target).joined(separator: ", ")
        complete(journal, in: directory)
        note(
            journal.rollingBack
                ? "note: undid the change \(journal.command) (process \(journal.process)) left unfinished: \(files) hold what they held before it"
                : "note: completed the change \(journal.command) (process \(journal.process)) left unfinished: \(files)"
        )
    }

    /// Steps 3 and 4 for what is left of them, or undoes the change when the journal says so;
    /// each step can be repeated.
    ///
    /// Undoing keeps every old copy until the journal is gone: a file gets its old contents
    /// back through a second name of its copy (`link(2)`), renamed over it, so that a load
    /// while the journal is there always finds the copy (a kill at any step leaves the state
    /// before the change, whole).
    private static func complete(_ journal: TransactionJournal, in directory: String) {
        var directories: [String] = []
        for entry in journal.entries {
            let entryDirectory = PathNames.directory(of: entry.target)
            if !directories.contains(entryDirectory) { directories.append(entryDirectory) }
            if journal.rollingBack {
                if access(entry.new, F_OK) == 0 {
                    unlink(entry.new)  // never renamed: the file is as it was
                    FaultInjection.step()
                } else if let old = entry.old {
                    restore(old, over: entry.target)  // replaced: back (the copy stays)
                } else {
                    unlink(entry.target)  // created by the change: not there before it
                    FaultInjection.step()
                }
            } else if access(entry.new, F_OK) == 0 {
                rename(entry.new, entry.target)
                FaultInjection.step()
            }
        }
        for entryDirectory in directories { DropInFile.syncDirectory(entryDirectory) }
        FaultInjection.step()
        unlink(TransactionJournal.path(in: directory))
        FaultInjection.step()
        DropInFile.syncDirectory(directory)
        for entry in journal.entries {
            if let old = entry.old {
                unlink(old)
                FaultInjection.step()
            }
        }
    }

    /// Puts the old contents in `old` back at `target`, keeping `old`: a second name for it
    /// (hidden, ending in ``TransactionJournal/newSuffix``, so a leftover when a kill leaves
    /// it), renamed over `target`. Where the file system has no hard links, `old` itself is
    /// renamed (a loader then reads the target, which holds the old contents again).
    private static func restore(_ old: String, over target: String) {
        guard access(old, F_OK) == 0 else { return }  // restored and removed: done before
        let second = old + TransactionJournal.newSuffix
        unlink(second)
        if link(old, second) == 0 {
            FaultInjection.step()
            rename(second, target)
        } else {
            rename(old, target)
        }
        FaultInjection.step()
    }
}
