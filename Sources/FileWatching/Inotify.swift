#if os(Linux)
    import Glibc

    /// A small wrapper over one Linux inotify instance.
    ///
    /// The file descriptor is created with `IN_CLOEXEC | IN_NONBLOCK`, so ``readEvents()``
    /// never blocks; use ``waitForEvents(timeout:)`` or your own `poll(2)` on
    /// ``fileDescriptor`` to wait. The descriptor is closed by ``close()`` or when the instance
    /// is deinitialized.
    ///
    /// An instance is meant to be used from one thread at a time; it is not `Sendable`.
    ///
    /// ```swift
    /// let inotify = try Inotify()
    /// let wd = try inotify.addWatch(path: "/etc/app", mask: [.created, .closedAfterWriting])
    /// if try inotify.waitForEvents(timeout: .seconds(1)) {
    ///   for event in try inotify.readEvents() where event.watchDescriptor == wd { ... }
    /// }
    /// ```
    package final class Inotify {
        /// The inotify file descriptor, or -1 once closed.
        package private(set) var fileDescriptor: Int32

        /// The size of the buffer each `read(2)` uses; holds many records at once.
        private static let readBufferSize = 64 * 1024

        /// Creates an inotify instance with `inotify_init1(IN_CLOEXEC | IN_NONBLOCK)`.
        ///
        /// - Throws: ``InotifyError`` if the kernel refuses, for example when the per-user limit
        ///   on inotify instances (`fs.inotify.max_user_instances`) is reached.
        package init() throws {
            let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            guard fd >= 0 else {
                throw InotifyError(operation: "inotify_init1", errno: Glibc.errno)
            }
            fileDescriptor = fd
        }

        deinit {
            close()
        }

        /// Closes the file descriptor. Every watch goes away with it. Calling it again does nothing.
        package func close() {
            guard fileDescriptor >= 0 else { return }
            _ = Glibc.close(fileDescriptor)
            fileDescriptor = -1
        }

        /// Adds a watch on `path`, or changes the mask of the existing watch on the same inode.
        ///
        /// The kernel returns the same descriptor for every path that leads to the same inode.
        ///
        /// - Parameters:
        ///   - path: The file or directory to watch. Symbolic links are followed unless `mask`
        ///     contains ``Mask/dontFollow``.
        ///   - mask: The events to watch for, plus watch options such as ``Mask/onlyDirectory``.
        /// - Returns: The watch descriptor that events for this watch carry.
        /// - Throws: ``InotifyError`` with the path, for example `ENOENT`, `EACCES`, `ENOTDIR`,
        ///   or `ENOSPC` when `fs.inotify.max_user_watches` is reached.
        @discardableResult
        package func addWatch(path: String, mask: Mask) throws -> WatchDescriptor {
            let wd = inotify_add_watch(fileDescriptor, path, mask.rawValue)
            guard wd >= 0 else {
                throw InotifyError(operation: "inotify_add_watch", path: path, errno: Glibc.errno)
            }
            return WatchDescriptor(rawValue: wd)
        }

        /// Removes a watch. The kernel then queues an ``Mask/ignored`` event for it.
        ///
        /// - Parameter watchDescriptor: A descriptor returned by ``addWatch(path:mask:)``.
        /// - Throws: ``InotifyError`` with `EINVAL` if the watch no longer exists, for example
        ///   because the watched object was deleted.
        package func removeWatch(_ watchDescriptor: WatchDescriptor) throws {
            guard inotify_rm_watch(fileDescriptor, watchDescriptor.rawValue) == 0 else {
                throw InotifyError(operation: "inotify_rm_watch", errno: Glibc.errno)
            }
        }

        /// Waits until events can be read, the timeout passes, or a signal interrupts the wait.
        ///
        /// - Parameter timeout: How long to wait at most; `nil` waits without limit. Rounded up to
        ///   whole milliseconds.
        /// - Returns: `true` if events are ready to be read.
        /// - Throws: ``InotifyError`` if `poll(2)` fails for another reason than `EINTR`.
        package func waitForEvents(timeout: Duration?) throws -> Bool {
            var pollDescriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let result = Glibc.poll(&pollDescriptor, 1, Self.milliseconds(timeout))
            if result < 0 {
                if Glibc.errno == EINTR { return false }
                throw InotifyError(operation: "poll", errno: Glibc.errno)
            }
            return result > 0 && pollDescriptor.revents & Int16(POLLIN) != 0
        }

        /// Reads every event that is queued now, without blocking.
        ///
        /// - Returns: The queued events in order; empty if none are queued.
        /// - Throws: ``InotifyError`` if `read(2)` fails for another reason than `EAGAIN` or
        ///   `EINTR`.
        package func readEvents() throws -> [Event] {
            var events: [Event] = []
            try withUnsafeTemporaryAllocation(
                byteCount: Self.readBufferSize, alignment: MemoryLayout<inotify_event>.alignment
            ) { buffer in
                while true {
                    let count = Glibc.read(fileDescriptor, buffer.baseAddress, buffer.count)
                    if count > 0 {
                        events += Event.decode(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        continue
                    }
                    if count == 0 { return }
                    switch Glibc.errno {
                    case EINTR: continue
                    case EAGAIN, EWOULDBLOCK: return
                    case let code: throw InotifyError(operation: "read", errno: code)
                    }
                }
            }
            return events
        }

        /// Converts a timeout to the milliseconds `poll(2)` takes, rounding up; -1 for `nil`.
        static func milliseconds(_ timeout: Duration?) -> Int32 {
            guard let timeout else { return -1 }
            if timeout <= .zero { return 0 }
            let (seconds, attoseconds) = timeout.components
            let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return Int32(clamping: millis)
        }
    }
#endif
