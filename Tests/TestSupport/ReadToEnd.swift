package import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything `handle` gives until end of file (or a read error: what came before it), read
/// `chunk` bytes at a time (a small chunk makes a writer on the other end of a pipe wait).
///
/// Foundation's `readDataToEndOfFile()` traps on any read error, and on Linux a read that a
/// signal interrupts is one (`EINTR`: the `SIGCHLD` of another test's child process, which
/// took a whole test run down once); this reads again instead.
package func readToEnd(_ handle: FileHandle, chunk: Int = 64 * 1024) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: chunk)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}
