#if os(Linux)
    import Glibc

    /// An error from an inotify system call, with the context needed to diagnose it.
    ///
    /// The description reads like
    /// `inotify_add_watch("/etc/app") failed: No such file or directory (errno 2)`.
    package struct InotifyError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The system call that failed, for example `inotify_add_watch`.
        package var operation: String
        /// The path the call was about, if any.
        package var path: String?
        /// The `errno` value the call left behind.
        package var errno: Int32
        /// The human-readable message for ``errno``, as returned by `strerror`.
        package var message: String

        /// Creates an error for a failed `operation` with the given `errno` value.
        ///
        /// - Parameters:
        ///   - operation: The system call that failed.
        ///   - path: The path the call was about, if any.
        ///   - errno: The `errno` value; ``message`` is derived from it with `strerror`.
        package init(operation: String, path: String? = nil, errno: Int32) {
            self.operation = operation
            self.path = path
            self.errno = errno
            self.message = String(cString: strerror(errno))
        }

        /// Whether the kernel refused for lack of resources rather than because of the path:
        /// the per-user limit on inotify instances (`fs.inotify.max_user_instances`, `EMFILE`)
        /// or watches (`fs.inotify.max_user_watches`, `ENOSPC`), the open-file limits, or
        /// memory. The watcher then polls until inotify can be had again.
        package var isResourceLimit: Bool {
            switch operation {
            case "inotify_init1": [EMFILE, ENFILE, ENOMEM].contains(errno)
            case "inotify_add_watch": [ENOSPC, ENOMEM].contains(errno)
            default: false
            }
        }

        /// A one-line description: the operation, the path, the message and the errno value.
        package var description: String {
            let subject = path.map { "(\"\($0)\")" } ?? "()"
            return "\(operation)\(subject) failed: \(message) (errno \(errno))"
        }
    }
#endif
