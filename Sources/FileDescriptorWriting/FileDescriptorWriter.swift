#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The package's one loop that writes bytes whole to a file descriptor: the atomic files, the
/// drop-ins envctl writes, envctl's and the Info.plist tool's output, the journal's fallback to
/// stderr and a child process's input all write through it.
///
/// `write(2)` may take fewer bytes than it was given (a pipe, a signal) or fail with `EINTR`;
/// both are retried until every byte is written or the call fails for another reason. A call
/// that takes no byte at all is reported as `EIO` rather than retried, so that no descriptor can
/// keep a writer in the loop.
package enum FileDescriptorWriter {
    /// The standard error file descriptor.
    package static let standardError: Int32 = 2

    /// The standard output file descriptor.
    package static let standardOutput: Int32 = 1

    /// Writes all of `bytes` to `descriptor`.
    ///
    /// Contiguous bytes (`Data`, `[UInt8]`, a native string's UTF-8) are written where they
    /// are; other collections are copied once into an array first.
    ///
    /// - Throws: `POSIXError` with the `errno` of the call that failed; some bytes may have been
    ///   written before it.
    package static func writeAll(_ bytes: some Collection<UInt8>, to descriptor: Int32) throws(POSIXError) {
        let result: Result<Void, POSIXError>? = bytes.withContiguousStorageIfAvailable { buffer in
            writeAll(UnsafeRawBufferPointer(buffer), to: descriptor)
        }
        if let result { return try result.get() }
        try Array(bytes).withUnsafeBytes { writeAll($0, to: descriptor) }.get()
    }

    /// Writes all of `text`'s UTF-8 to `descriptor`, for output that has nowhere to report a
    /// failure (a log line, a message before exit).
    ///
    /// - Returns: `false` if the descriptor refused the bytes.
    @discardableResult
    package static func write(_ text: String, to descriptor: Int32) -> Bool {
        (try? writeAll(text.utf8, to: descriptor)) != nil
    }

    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Result<Void, POSIXError> {
        var offset = 0
        while offset < buffer.count {
            let written = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                let code = written < 0 ? errno : EIO
                return .failure(POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
            }
        }
        return .success(())
    }

    /// `write(2)`, named apart from this type's own `write`.
    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
            Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
            Musl.write(descriptor, bytes, count)
        #else
            Darwin.write(descriptor, bytes, count)
        #endif
    }
}
