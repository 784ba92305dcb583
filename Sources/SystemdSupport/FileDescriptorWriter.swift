import SystemPackage

/// Writes whole strings to a file descriptor, without buffering.
enum FileDescriptorWriter {
    /// The standard error file descriptor.
    static let standardError: Int32 = 2

    /// Writes all of `text` to `descriptor`, retrying after interruptions and partial writes.
    ///
    /// - Returns: `false` if the descriptor refused the data.
    @discardableResult
    static func write(_ text: String, to descriptor: Int32) -> Bool {
        (try? FileDescriptor(rawValue: descriptor).writeAll(text.utf8)) != nil
    }
}
