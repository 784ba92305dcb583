#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads the small files the kernel makes (`/proc/net/unix`, `/proc/PID/comm`,
/// `/proc/sys/kernel/random/boot_id`) to their end, without Foundation's `FileHandle`: a
/// kernel file reports size 0 and is made one page per read(2), so it is read until read(2)
/// returns nothing, up to a limit.
package enum KernelFile {
    /// The bytes of the file at `path`, at most `limit` of them; `nil` if it cannot be opened
    /// or read.
    package static func bytes(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while bytes.count < limit {
            let wanted = min(buffer.count, limit - bytes.count)
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes.append(contentsOf: buffer[..<count])
        }
        return bytes
    }

    /// The file's text without the white space and newlines at its ends (a name, an id), at
    /// most 4 KiB of it; `nil` if it cannot be read.
    package static func line(_ path: String) -> String? {
        guard let bytes = bytes(path, limit: 4096) else { return nil }
        let scalars = String(decoding: bytes, as: UTF8.self).unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
