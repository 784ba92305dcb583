#if os(Linux)
    import Glibc

    /// The process's mount table, `/proc/self/mountinfo`, open for `poll(2)`.
    ///
    /// The kernel reports `POLLPRI` (and `POLLERR`) on this descriptor once for every change of
    /// the mount namespace's table since the last `poll` (a mount, an unmount, a move, a
    /// remount), anywhere in the namespace. A remount changes no file, so inotify says
    /// nothing: this is how ``FileWatcher`` notices that `systemd-confext` merged, refreshed or
    /// unmerged an overlay on `/etc`, or that anything else was mounted over a configuration
    /// directory.
    ///
    /// Used from the watch loop's thread only.
    final class MountWatch {
        /// The path it reads.
        static let path = "/proc/self/mountinfo"
        /// The most it reads of the table: 64 MiB, about 300,000 mounts. Past that the rest of
        /// the table is not compared (the mounts that matter, `/` and `/etc`, come first).
        static let maximumSize = 64 << 20

        /// The open table, for `poll(2)` with `POLLPRI`.
        let fileDescriptor: Int32

        /// Opens the table.
        ///
        /// - Throws: ``InotifyError`` (operation `open`) if it cannot be opened, for example
        ///   when `/proc` is not mounted.
        init() throws {
            let descriptor = open(Self.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw InotifyError(operation: "open", path: Self.path, errno: errno) }
            fileDescriptor = descriptor
        }

        deinit {
            _ = close(fileDescriptor)
        }

        /// Reads the whole table from the start (at most ``maximumSize``) and parses it.
        ///
        /// - Throws: ``InotifyError`` (operation `read`) if reading fails.
        func read() throws -> [MountInfoEntry] {
            guard lseek(fileDescriptor, 0, SEEK_SET) == 0 else {
                throw InotifyError(operation: "lseek", path: Self.path, errno: errno)
            }
            var bytes: [UInt8] = []
            let chunk = 64 * 1024
            while bytes.count < Self.maximumSize {
                let start = bytes.count
                bytes.append(contentsOf: repeatElement(0, count: chunk))
                let count = bytes.withUnsafeMutableBytes { buffer in
                    Glibc.read(fileDescriptor, buffer.baseAddress! + start, chunk)
                }
                if count < 0 {
                    bytes.removeLast(chunk)
                    if errno == EINTR { continue }
                    throw InotifyError(operation: "read", path: Self.path, errno: errno)
                }
                bytes.removeLast(chunk - count)
                if count == 0 { break }
            }
            return MountTable.parse(String(decoding: bytes, as: UTF8.self))
        }
    }
#endif
