#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes whole strings to a file descriptor, without buffering.
enum FileDescriptorWriter {
    /// The standard error file descriptor.
    static let standardError: Int32 = 2

    /// Writes all of `text` to `descriptor`, retrying after interruptions and partial writes.
    ///
    /// - Returns: `false` if the descriptor refused the data.
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        var text = text
        return text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    private static func systemWrite(
        _ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int
    ) -> Int {
        #if canImport(Glibc)
            Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
            Musl.write(descriptor, bytes, count)
        #else
            Darwin.write(descriptor, bytes, count)
        #endif
    }
}
