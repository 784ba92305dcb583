import FileDescriptorWriting

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    package import Glibc
#elseif canImport(Musl)
    package import Musl
#elseif canImport(Darwin)
    package import Darwin
#endif

/// Replaces a file so that a reader sees the old contents or the new, never part of either.
///
/// The bytes go to a temporary file of their own in the same directory, which is then renamed
/// over the path. There is no `fsync`: the files written this way (the reload state in the
/// runtime directory, the fleet cache) are rewritten often and are never the only copy, so
/// after a power loss one may be older but never torn. `Data.write(options: .atomic)` syncs
/// twice per write, which the soak benchmark's hundred reloads a second felt.
package enum AtomicFile {
    /// Writes `bytes` to `path`.
    ///
    /// - Parameters:
    ///   - mode: The new file's permissions, before the process's umask applies.
    /// - Throws: `POSIXError` with the failing call's `errno`; the temporary file is removed.
    package static func replace(
        _ path: String, with bytes: some Collection<UInt8>, mode: mode_t = 0o666
    ) throws {
        let directory = PathNames.directory(of: path)
        let name = PathNames.lastComponent(of: path)
        let temporary = PathNames.join(
            (directory.isEmpty ? "." : directory),
            ".\(name).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw currentError() }
        do {
            try FileDescriptorWriter.writeAll(bytes, to: descriptor)
            guard close(descriptor) == 0 else {
                let error = currentError()
                unlink(temporary)
                throw error
            }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = currentError()
            unlink(temporary)
            throw error
        }
    }

    private static func currentError() -> POSIXError {
        POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
}
