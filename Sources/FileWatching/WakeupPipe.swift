#if os(Linux)
    import Glibc

    /// A pipe whose read end becomes readable once ``signal()`` is called, to wake a thread
    /// blocked in `poll(2)`. It stays readable, so a signal sent before the wait is not lost.
    final class WakeupPipe: Sendable {
        /// The end to poll for `POLLIN`.
        let readDescriptor: Int32
        /// The end ``signal()`` writes to.
        private let writeDescriptor: Int32

        /// Creates the pipe, with both ends close-on-exec and non-blocking.
        init() throws {
            var descriptors: [Int32] = [-1, -1]
            guard pipe(&descriptors) == 0 else {
                throw InotifyError(operation: "pipe", errno: Glibc.errno)
            }
            for descriptor in descriptors {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
            }
            readDescriptor = descriptors[0]
            writeDescriptor = descriptors[1]
        }

        deinit {
            _ = close(readDescriptor)
            _ = close(writeDescriptor)
        }

        /// Makes the read end readable. Safe to call from any thread, any number of times.
        func signal() {
            var byte: UInt8 = 1
            _ = write(writeDescriptor, &byte, 1)
        }
    }
#endif
