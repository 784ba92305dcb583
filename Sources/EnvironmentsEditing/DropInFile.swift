import Environments
import FileDescriptorWriting

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    package import Glibc
#endif

/// One drop-in on disk, as `set`, `unset` and `edit` change it: read with its owner, group,
/// mode and extended attributes; changed only under the drop-in directory's lock; replaced
/// only if it still holds what was read, by a new file that keeps all of those.
///
/// **The lock.** `Environments.plist.d/.envctl.lock`, taken with `flock(2)`, so that the
/// kernel releases it when its holder ends, however it ends. One lock for the directory rather
/// than one per drop-in: a change is checked together with every other drop-in, so two
/// changes to different drop-ins, each valid alone, must not be checked side by side either.
/// The holder writes its process id into the file (for the message of a waiter that gives up)
/// and removes it when done; a waiter that got the lock of a removed file tries again. A lock
/// file left by a killed `envctl` is a small hidden file that the next one takes and removes.
///
/// **Nothing in the directory is trusted.** A group-writable drop-in directory lets its group
/// put anything under the lock's name, and `envctl` often runs as root. So `envctl` writes,
/// truncates, chmods or chowns only a file it made itself (`O_CREAT|O_EXCL|O_NOFOLLOW`), and
/// only through its descriptor: a lock file that was there already is opened read-only
/// (`O_NOFOLLOW`: a symbolic link is refused), refused unless it is a regular file with a
/// single name (a hard link planted as the lock would make it another file), and, once
/// locked, removed and made anew. Another user's lock file is read, never written.
///
/// **Leftovers.** The new contents go to a hidden temporary file beside the drop-in
/// (`.NAME.XXXXXXXX.envctl-new`, made with `O_CREAT|O_EXCL|O_NOFOLLOW`: a name that is taken,
/// by a file or a link, is never opened, and another is drawn), renamed over it. Hidden files
/// are not drop-ins to the daemon or its file watcher, so neither the lock nor a temporary file
/// left by a killed `envctl` is read or starts a reload; the next change removes such
/// leftovers while it holds the lock: regular files with one name only, by name (`unlink`
/// follows no link). Before that, it completes a change that spans files which a killed
/// `envctl` left unfinished in the directory (``FileTransaction/recover(in:scope:note:)``): until then its
/// new files and the copies of old ones (`.NAME.XXXXXXXX.envctl-old`) are not leftovers.
package struct DropInFile {
    /// The drop-in's path.
    package let path: String
    /// The main file, `Environments.plist`, whose permissions a new drop-in may take.
    package let mainFile: String
    /// Draws the random part of a temporary file's name (``randomTemporaryPart()``); a test
    /// draws names that are taken, to see that they are passed over.
    package var drawTemporaryPart: () -> String = DropInFile.randomTemporaryPart
    /// The owner, group and mode of a new file, when they are not the configuration's
    /// (``newFilePermissions()``): `credential set`'s files outside it.
    package var fixedNewFilePermissions: Permissions?
    /// The mode of the directory when it is made.
    package var directoryMode: mode_t = 0o755
    /// Which files a journal left in the directory may name for `envctl` to follow it; `nil`:
    /// the configuration's (``JournalScope/configuration(mainFile:dropInDirectory:)``).
    package var journalScope: JournalScope?
    /// Where notes go: a lock waited for, an owner or an extended attribute not kept, a change
    /// left unfinished and completed.
    package var note: NoteSink = EditingNotes.log

    /// The drop-in at `path` of the configuration whose main file is `mainFile`.
    package init(path: String, mainFile: String) {
        self.path = path
        self.mainFile = mainFile
    }

    /// The longest `set`, `unset` or `edit` waits for another one's lock.
    package static let lockWaitLimit: Duration = .seconds(60)
    /// After this long waiting for the lock, `envctl` says whom it waits for.
    package static let lockWaitNotice: Duration = .seconds(2)
    /// The lock's file name, in the drop-in directory.
    package static let lockName = ".envctl.lock"
    /// The suffix of the temporary files (hidden, so never drop-ins).
    package static let temporarySuffix = TransactionJournal.newSuffix
    /// The largest drop-in read, as the library's own cap on a configuration file.
    package static let maximumSize = 16 << 20
    /// A new drop-in's mode when the configuration has no other file.
    package static let defaultMode: mode_t = 0o644

    package var directory: String { PathNames.directory(of: path) }
    package var name: String { PathNames.lastComponent(of: path) }
    package var lockPath: String { PathNames.join(directory, Self.lockName) }

    /// The drop-in as read: its bytes and what a replacement keeps.
    package struct State {
        package var contents: Data
        package var owner: uid_t
        package var group: gid_t
        package var mode: mode_t
        /// Extended attributes (POSIX ACLs among them), by name, in the order listed.
        package var extendedAttributes: [(name: String, value: [UInt8])]
    }

    /// The drop-in no longer holds what was read: someone else changed it meanwhile.
    package struct Changed: Error {}

    // MARK: Reading

    /// The drop-in now, or `nil` if it does not exist.
    ///
    /// A symbolic link is refused (a replacement would turn the link, which configuration
    /// management may own, into a file of its own), as is anything but a regular file.
    package func read() throws -> State? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            let error = errno
            if error == ENOENT { return nil }
            if error == ELOOP {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?"
                throw Failure(
                    .fileUnreadable,
                    "\(path) is a symbolic link (to \(target)); envctl replaces files, not links: change \(target) itself, or replace the link with a file",
                    file: path
                )
            }
            throw Failure(.fileUnreadable, "cannot read \(path): \(Self.describe(error))", file: path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Failure(.fileUnreadable, "cannot read \(path): \(Self.describe(errno))", file: path)
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw Failure(
                .fileUnreadable, "\(path) is not a regular file; remove it, or pass another --drop-in", file: path)
        }
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(.fileUnreadable, "cannot read \(path): \(Self.describe(errno))", file: path)
            }
            if count == 0 { break }
            contents.append(contentsOf: buffer[..<count])
            guard contents.count <= Self.maximumSize else {
                throw Failure(
                    .fileUnreadable,
                    "\(path) is larger than \(Self.maximumSize >> 20) MiB, which no configuration file needs (the daemon does not read it either)",
                    file: path
                )
            }
        }
        return State(
            contents: contents, owner: status.st_uid, group: status.st_gid, mode: status.st_mode & 0o7777,
            extendedAttributes: try Self.extendedAttributes(of: descriptor, path: path))
    }

    /// Every extended attribute of the open file.
    private static func extendedAttributes(of descriptor: Int32, path: String) throws -> [(
        name: String, value: [UInt8]
    )] {
        guard let list = ExtendedAttributeCalls.list(), let get = ExtendedAttributeCalls.get() else {
            throw Failure(
                .fileUnreadable, "cannot list the extended attributes of \(path): the C library has no flistxattr")
        }
        var size = list(descriptor, nil, 0)
        if size < 0 {
            if errno == ENOTSUP { return [] }
            throw Failure(.fileUnreadable, "cannot list the extended attributes of \(path): \(describe(errno))")
        }
        var names = [CChar](repeating: 0, count: size + 1)
        size = list(descriptor, &names, size)
        guard size >= 0 else {
            throw Failure(.fileUnreadable, "cannot list the extended attributes of \(path): \(describe(errno))")
        }
        var result: [(name: String, value: [UInt8])] = []
        for raw in names[..<size].split(separator: 0) {
            let name = String(decoding: raw.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let length = get(descriptor, name, nil, 0)
            guard length >= 0 else {
                if errno == ENODATA { continue }  // removed meanwhile
                throw Failure(
                    .fileUnreadable, "cannot read the extended attribute \(name) of \(path): \(describe(errno))")
            }
            var value = [UInt8](repeating: 0, count: length)
            let read = value.withUnsafeMutableBytes { get(descriptor, name, $0.baseAddress, length) }
            guard read >= 0 else {
                throw Failure(
                    .fileUnreadable, "cannot read the extended attribute \(name) of \(path): \(describe(errno))")
            }
            result.append((name, Array(value[..<read])))
        }
        return result
    }

    // MARK: Locking

    /// Runs `body` holding the drop-in directory's lock (creating the directory, ``directoryMode``,
    /// if needed: it is removed again if it is still empty when `body` is done).
    ///
    /// Waits at most ``lockWaitLimit`` for another `envctl`; after ``lockWaitNotice`` it says
    /// on stderr which process it waits for.
    package func withLock<T>(_ body: () throws -> T) throws -> T {
        let createdDirectory = try makeDirectory()
        let lock = try acquireLock()
        defer {
            // Removed while still held: a waiter that then gets it sees that its file is gone.
            // `unlink` removes the name only: it follows no link and changes no file.
            unlink(lockPath)
            close(lock)
            if createdDirectory { rmdir(directory) }
        }
        // A change that spans files left unfinished by a killed envctl is completed first
        // (its new files are leftovers' names until then).
        try FileTransaction.recover(
            in: directory,
            scope: journalScope ?? .configuration(mainFile: mainFile, dropInDirectory: directory), note: note)
        removeLeftovers()
        return try body()
    }

    /// Creates the drop-in directory if it does not exist; whether it did not.
    private func makeDirectory() throws -> Bool {
        var status = stat()
        if stat(directory, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else {
                throw Failure(
                    .fileUnwritable,
                    "\(directory) is not a directory; remove it, or make it a directory of *.plist files")
            }
            return false
        }
        guard errno == ENOENT else {
            throw Failure(.fileUnwritable, "cannot use \(directory): \(Self.describe(errno))")
        }
        let parent = PathNames.directory(of: directory)
        guard FileManager.default.fileExists(atPath: parent) else {
            throw Failure(
                .fileUnwritable,
                "the configuration directory \(parent) does not exist; make it first (mkdir -p \(parent))")
        }
        guard mkdir(directory, directoryMode) == 0 else {
            if errno == EEXIST { return false }  // another envctl made it meanwhile
            throw Failure(.fileUnwritable, "cannot make \(directory): \(Self.describe(errno))")
        }
        // 0755 whatever the umask, as before; on the directory this process made, never
        // through a link put in its place.
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor >= 0 {
            var made = stat()
            if fstat(descriptor, &made) == 0, made.st_uid == geteuid() { fchmod(descriptor, directoryMode) }
            close(descriptor)
        }
        return true
    }

    /// The lock file as opened: its descriptor, and whether this process made it.
    private struct OpenedLock {
        package var descriptor: Int32
        package var created: Bool
    }

    /// The locked lock file's descriptor.
    ///
    /// Only a lock file this process made is written (its process id) or given a mode. One
    /// that was there already (a killed `envctl`'s, or another's that has not locked it yet)
    /// is opened read-only, which `flock` needs no more than; once locked, it is removed and
    /// made anew, so that the lock file a waiter reads is its holder's own.
    private func acquireLock() throws -> Int32 {
        let start = ContinuousClock.now
        var pause: Duration = .milliseconds(1)
        var noticed = false
        var lock = try openLockFile()
        while true {
            if flock(lock.descriptor, LOCK_EX | LOCK_NB) == 0 {
                // The lock of the file that is there now, not of one its last holder removed.
                if isCurrentLock(lock.descriptor) {
                    if lock.created {
                        let text = Array("\(getpid())\n".utf8)
                        _ = pwrite(lock.descriptor, text, text.count, 0)
                        return lock.descriptor
                    }
                    // Not this process's file: removed (its name only) and made anew. Where it
                    // cannot be removed (another user's, in a sticky directory), it is held as
                    // it is, unwritten.
                    guard unlink(lockPath) == 0 else { return lock.descriptor }
                }
                close(lock.descriptor)
                lock = try openLockFile()
                continue
            }
            let error = errno
            guard error == EWOULDBLOCK || error == EINTR else {
                close(lock.descriptor)
                throw Failure(.lockUnavailable, "cannot lock \(lockPath): \(Self.describe(error))")
            }
            let waited = ContinuousClock.now - start
            if waited >= Self.lockWaitLimit {
                let holder = lockHolder(lock.descriptor)
                close(lock.descriptor)
                throw Failure(
                    .lockUnavailable,
                    "another envctl\(holder) has been changing \(directory) for over \(Self.lockWaitLimit.components.seconds) s (it holds \(lockPath)); nothing was written. Try again when it is done."
                )
            }
            if waited >= Self.lockWaitNotice, !noticed {
                noticed = true
                note("waiting for another envctl\(lockHolder(lock.descriptor)), which is changing \(directory)")
            }
            usleep(UInt32(pause.components.attoseconds / 1_000_000_000_000))
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Whether the lock file's name still names the open file `descriptor`.
    private func isCurrentLock(_ descriptor: Int32) -> Bool {
        var held = stat()
        var current = stat()
        return fstat(descriptor, &held) == 0 && lstat(lockPath, &current) == 0 && held.st_dev == current.st_dev
            && held.st_ino == current.st_ino
    }

    /// Opens the lock file: a new one (`O_EXCL`: made by this process, never an existing one
    /// or a link's target), readable and writable by its owner and readable by the directory's
    /// group when that group may write the directory; else the existing one, read-only,
    /// without following a symbolic link, and only if it is a regular file with no other
    /// name (a hard link planted as the lock is refused, and its file left as it is).
    private func openLockFile() throws -> OpenedLock {
        for _ in 0..<100 {
            var descriptor = open(lockPath, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                var directoryStatus = stat()
                if stat(directory, &directoryStatus) == 0, directoryStatus.st_mode & S_IWGRP != 0 {
                    // The group's members may wait for it (read-only, as for any lock file not theirs).
                    _ = fchown(descriptor, uid_t.max, directoryStatus.st_gid)
                    fchmod(descriptor, 0o640)
                } else {
                    fchmod(descriptor, 0o600)
                }
                return OpenedLock(descriptor: descriptor, created: true)
            }
            var error = errno
            if error == EEXIST {
                descriptor = open(lockPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                if descriptor >= 0 {
                    var status = stat()
                    guard fstat(descriptor, &status) == 0 else {
                        error = errno
                        close(descriptor)
                        throw Failure(.lockUnavailable, "cannot open the lock \(lockPath): \(Self.describe(error))")
                    }
                    if status.st_mode & S_IFMT != S_IFREG || status.st_nlink > 1 {
                        close(descriptor)
                        let what =
                            status.st_mode & S_IFMT != S_IFREG
                            ? "not a regular file" : "a file with \(status.st_nlink) names (hard links)"
                        throw Failure(
                            .lockUnavailable,
                            "\(lockPath) is \(what), not a lock file envctl made: envctl does not use it, and nothing was written. Look at what it is, remove it (rm \(lockPath)), and try again"
                        )
                    }
                    return OpenedLock(descriptor: descriptor, created: false)
                }
                error = errno
                if error == ENOENT { continue }  // its holder removed it meanwhile
                if error == EACCES {
                    throw Failure(
                        .lockUnavailable,
                        "cannot open the lock \(lockPath): \(Self.describe(error)) (another user's lock file, which envctl needs to read: run envctl as that user or as root, or remove it once no envctl runs)"
                    )
                }
            }
            if error == ELOOP {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: lockPath)) ?? "?"
                throw Failure(
                    .lockUnavailable,
                    "\(lockPath) is a symbolic link (to \(target)), not a lock file envctl made: envctl does not follow it, and nothing was written. Remove the link (rm \(lockPath)) and try again"
                )
            }
            // The directory went away with the last holder (it had made it): make it again.
            if error == ENOENT, (try? makeDirectory()) != nil { continue }
            throw Failure(.lockUnavailable, "cannot open the lock \(lockPath): \(Self.describe(error))")
        }
        throw Failure(.lockUnavailable, "cannot open the lock \(lockPath): the directory keeps disappearing")
    }

    /// ` (process N)`, from the open lock file, or nothing (when it names no live process).
    private func lockHolder(_ descriptor: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0,
            let pid = Int32(
                String(decoding: buffer[..<count], as: UTF8.self).trimmingWhitespaceAndNewlines()),
            pid > 0, kill(pid, 0) == 0 || errno == EPERM
        else { return "" }
        return " (process \(pid))"
    }

    /// Removes the temporary files of changes that never finished (their `envctl` was
    /// killed); with the lock held, no other change can be under way. Only what such a file
    /// can be is removed, a regular file with one name; a symbolic link or a hard link under
    /// such a name is left as it is (`unlink` would not follow it, but it is not envctl's).
    private func removeLeftovers() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names
        where name.hasPrefix(".")
            && (name.hasSuffix(Self.temporarySuffix) || name.hasSuffix(TransactionJournal.oldSuffix))
        {
            let leftover = PathNames.join(directory, name)
            var status = stat()
            guard lstat(leftover, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1 else {
                continue
            }
            unlink(leftover)
        }
    }

    // MARK: Replacing

    /// Replaces the drop-in with `contents`, if it still holds `expected` (`nil`: it does not
    /// exist). Call it holding the lock.
    ///
    /// The new file keeps the owner, group, mode and extended attributes (POSIX ACLs among
    /// them) of the file it replaces; a new drop-in takes the owner, group and mode of
    /// ``newFilePermissions()``. It is written and synced in full before it is renamed over
    /// the drop-in, and the directory is synced after: a change that was reported is on disk.
    ///
    /// - Throws: ``Changed`` if the drop-in does not hold `expected`; a ``Failure`` otherwise.
    package func replace(expecting expected: Data?, with contents: Data) throws {
        let current = try read()
        guard current?.contents == expected else { throw Changed() }
        let temporary = try writeTemporaryFile(contents, keeping: current)
        do {
            // The drop-in may have changed while the new file was written.
            guard try read()?.contents == expected else { throw Changed() }
            guard rename(temporary, path) == 0 else {
                throw Failure(.fileUnwritable, "cannot replace \(path): \(Self.describe(errno))", file: path)
            }
        } catch {
            unlink(temporary)
            throw error
        }
        Self.syncDirectory(directory)
    }

    /// Writes `contents` to a new hidden file beside the drop-in (``makeTemporaryFile(suffix:)``)
    /// with what a replacement of `current` gets (its owner, group, mode and extended
    /// attributes; a new file's permissions when `current` is `nil`), synced and closed; its
    /// path. A failure removes it.
    package func writeTemporaryFile(_ contents: Data, keeping current: State?, suffix: String = temporarySuffix) throws
        -> String
    {
        let temporary = try makeTemporaryFile(suffix: suffix)
        var descriptor = temporary.descriptor
        do {
            try Self.writeAll(descriptor, contents, path: temporary.path)
            if let current {
                try keep(current, on: descriptor)
            } else {
                try give(fixedNewFilePermissions ?? newFilePermissions(), to: descriptor)
            }
            guard fsync(descriptor) == 0 else {
                throw Failure(.fileUnwritable, "cannot write \(temporary.path): \(Self.describe(errno))")
            }
            let closed = close(descriptor)
            descriptor = -1
            guard closed == 0 else {
                throw Failure(.fileUnwritable, "cannot write \(temporary.path): \(Self.describe(errno))")
            }
        } catch {
            if descriptor >= 0 { close(descriptor) }
            unlink(temporary.path)
            throw error
        }
        return temporary.path
    }

    /// Syncs a directory, so that the names changed in it are on disk.
    package static func syncDirectory(_ directory: String) {
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    /// A new hidden file beside the drop-in, readable by its owner only until it gets its
    /// permissions: made by this process (`O_CREAT|O_EXCL|O_NOFOLLOW`), so never a file or a
    /// link that was there already; a name that is taken is passed over for another.
    package func makeTemporaryFile(suffix: String = temporarySuffix) throws -> (path: String, descriptor: Int32) {
        for _ in 0..<100 {
            let path = PathNames.join(directory, ".\(name).\(drawTemporaryPart())\(suffix)")
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return (path, descriptor) }
            guard errno == EEXIST else {
                throw Failure(.fileUnwritable, "cannot write in \(directory): \(Self.describe(errno))")
            }
        }
        throw Failure(.fileUnwritable, "cannot write in \(directory): no free temporary name")
    }

    /// Eight random letters and digits.
    package static func randomTemporaryPart() -> String {
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<8).map { _ in letters.randomElement() ?? "x" })
    }

    /// Gives the new file the old one's owner, group, mode and extended attributes.
    private func keep(_ old: State, on descriptor: Int32) throws {
        try give(Permissions(owner: old.owner, group: old.group, mode: old.mode, from: path), to: descriptor)
        for (name, value) in old.extendedAttributes {
            // Integrity measurements of the old bytes, and file capabilities, do not carry over.
            if ["security.ima", "security.evm", "security.capability"].contains(name) { continue }
            let result = value.withUnsafeBytes { bytes in
                ExtendedAttributeCalls.set().map { $0(descriptor, name, bytes.baseAddress, bytes.count, 0) }
            }
            guard result != 0 else { continue }
            let error = result == nil ? ENOSYS : errno
            // system.* holds the access control lists: without them, the file's readers change.
            if name.hasPrefix("system.") {
                throw Failure(
                    .fileUnwritable,
                    "cannot give the new \(path) the access control list (\(name)) of the file it replaces: \(Self.describe(error)); nothing was written"
                )
            }
            note("note: the extended attribute \(name) of \(path) is not kept: \(Self.describe(error))")
        }
    }

    /// An owner, group and mode, and the file they come from.
    package struct Permissions {
        package var owner: uid_t
        package var group: gid_t
        package var mode: mode_t
        /// The file they were taken from, or `nil` for the default.
        package var from: String?

        package init(owner: uid_t, group: gid_t, mode: mode_t, from: String?) {
            self.owner = owner
            self.group = group
            self.mode = mode
            self.from = from
        }
    }

    /// Gives the open file `permissions`: the group and mode always (or an error: they decide
    /// who may read it); the owner when this process may (root may), else a note.
    private func give(_ permissions: Permissions, to descriptor: Int32) throws {
        if fchown(descriptor, permissions.owner, permissions.group) != 0 {
            guard fchown(descriptor, uid_t.max, permissions.group) == 0 else {
                throw Failure(
                    .fileUnwritable,
                    "cannot give \(path) the group \(Self.groupName(permissions.group)) of \(permissions.from ?? "its siblings"): \(Self.describe(errno)); nothing was written (run envctl as root, or as a member of that group)"
                )
            }
            if permissions.owner != geteuid() {
                note(
                    "note: \(path) is now owned by \(Self.userName(geteuid())), not \(Self.userName(permissions.owner)) as \(permissions.from ?? "before"): only root can give a file away"
                )
            }
        }
        guard fchmod(descriptor, permissions.mode) == 0 else {
            throw Failure(
                .fileUnwritable, "cannot set the mode of the new \(path): \(Self.describe(errno)); nothing was written")
        }
    }

    /// A new drop-in's owner, group and mode: those of the most restrictive of the
    /// configuration's files (the main file and the other drop-ins, links followed) — the one
    /// that grants others the fewest permissions, then its group, then its owner, the main
    /// file first on a tie, then the drop-ins in order — so that whoever may read the
    /// configuration (the daemon among them) may read the new drop-in, and no one else; the
    /// caller's user and group and ``defaultMode`` (0644, whatever the umask) when the
    /// configuration has no file yet.
    package func newFilePermissions() -> Permissions {
        let dropIns = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { ConfigurationLocation.isDropInFileName($0) && $0 != name }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { PathNames.join(directory, $0) }
        var best: (key: [Int], permissions: Permissions)?
        for file in [mainFile] + dropIns {
            var status = stat()
            guard stat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            let mode = status.st_mode & 0o777
            let key = [(mode & 0o007).nonzeroBitCount, (mode & 0o070).nonzeroBitCount, (mode & 0o700).nonzeroBitCount]
            if let best, !key.lexicographicallyPrecedes(best.key) { continue }
            best = (key, Permissions(owner: status.st_uid, group: status.st_gid, mode: mode, from: file))
        }
        return best?.permissions ?? Permissions(owner: geteuid(), group: getegid(), mode: Self.defaultMode, from: nil)
    }

    // MARK: Helpers

    private static func writeAll(_ descriptor: Int32, _ contents: Data, path: String) throws {
        do {
            try FileDescriptorWriter.writeAll(contents, to: descriptor)
        } catch {
            throw Failure(.fileUnwritable, "cannot write \(path): \(describe(error.code.rawValue))")
        }
    }

    package static func describe(_ error: Int32) -> String { String(cString: strerror(error)) }

    private static func userName(_ user: uid_t) -> String {
        guard let entry = getpwuid(user), let name = entry.pointee.pw_name else { return String(user) }
        return String(cString: name)
    }

    private static func groupName(_ group: gid_t) -> String {
        guard let entry = getgrgid(group), let name = entry.pointee.gr_name else { return String(group) }
        return String(cString: name)
    }
}

/// The C library's extended-attribute calls, which Swift's Glibc module does not import.
package enum ExtendedAttributeCalls {
    package typealias List = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int
    package typealias Get = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?, Int) -> Int
    package typealias Set = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafeRawPointer?, Int, Int32) -> Int32

    /// `flistxattr(2)`.
    package static func list() -> List? { symbol("flistxattr") }
    /// `fgetxattr(2)`.
    package static func get() -> Get? { symbol("fgetxattr") }
    /// `fsetxattr(2)`.
    package static func set() -> Set? { symbol("fsetxattr") }

    private static func symbol<Function>(_ name: String) -> Function? {
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }
}
