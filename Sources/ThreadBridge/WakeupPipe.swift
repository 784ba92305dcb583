#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pipe whose read end becomes readable once ``signal()`` is called, to wake a thread
/// blocked in `poll(2)`: the way async code (a cancellation, a finished answer) reaches a
/// thread that waits on file descriptors. It stays readable until ``drain()``, so a signal sent
/// before the wait is not lost.
package final class WakeupPipe: Sendable {
    /// Why the pipe could not be made.
    package struct Failure: Error, CustomStringConvertible {
        /// `errno` of `pipe(2)`.
        package let errno: Int32
        /// "cannot create a wake-up pipe: …" with the system's words for `errno`.
        package var description: String {
            "cannot create a wake-up pipe: \(String(cString: strerror(errno))) (errno \(errno))"
        }
    }

    /// The end to poll for `POLLIN`.
    package let readDescriptor: Int32
    /// The end ``signal()`` writes to.
    private let writeDescriptor: Int32

    /// Creates the pipe, with both ends close-on-exec and non-blocking.
    package init() throws(Failure) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw Failure(errno: errno) }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    deinit {
        _ = close(readDescriptor)
        _ = close(writeDescriptor)
    }

    /// Makes the read end readable. Safe from any thread, any number of times; a full pipe
    /// is readable already, so a write that would block is dropped.
    package func signal() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Reads every pending signal, so that the next `poll(2)` waits for a new one; called by
    /// the thread that polls, after it saw the read end readable.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(readDescriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
