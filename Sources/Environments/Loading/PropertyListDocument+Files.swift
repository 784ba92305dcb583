#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// Reading a document from disk, apart from its parsing (PropertyListDocument.swift): the
// EmbedInfoPlist plugin's tool compiles the parsing, never this (see Architecture).
extension PropertyListDocument {
    /// The largest file read: a configuration file beyond this is a mistake (or a device
    /// file behind a link), not something to read into memory.
    static let maximumFileSize = 16 << 20

    /// Reads and parses the file at `path`, which must be a regular file (symbolic links are
    /// followed) of at most ``maximumFileSize`` bytes.
    init(contentsOf path: String) throws(EnvironmentError) {
        try self.init(data: PropertyListDocument.readRegularFile(path), file: path)
    }

    /// The bytes of the regular file at `path`. FIFOs, sockets and devices are refused before
    /// anything is read from them (opened non-blocking, so a FIFO without a writer cannot
    /// block a reload), and so is anything larger than ``maximumFileSize``.
    ///
    /// - Parameter expected: What the file should be, for the errors: "a property-list file",
    ///   "a JSON Schema file".
    static func readRegularFile(_ path: String, expected: String = "a property-list file") throws(EnvironmentError)
        -> Data
    {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileAccess.error(path: path, errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileAccess.error(path: path, errno: errno) }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else {
            if kind == S_IFDIR {
                throw EnvironmentError(.fileUnreadable, "is a directory, expected \(expected)", file: path)
            }
            let what =
                switch kind {
                case S_IFIFO: "a FIFO (named pipe)"
                case S_IFSOCK: "a socket"
                case S_IFCHR: "a character device"
                case S_IFBLK: "a block device"
                default: "not a file"
                }
            throw EnvironmentError(
                .fileUnreadable, "is not a regular file: it is \(what)", file: path,
                hint: "Replace it with \(expected), or remove it (`ls -lL \(path)` shows what it is)")
        }
        var data = Data()
        // Its size now, so that the bytes are copied once (a file that grows meanwhile still reads).
        data.reserveCapacity(Int(min(Int64(status.st_size), Int64(maximumFileSize))) + 1)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw FileAccess.error(path: path, errno: errno)
            }
            data.append(contentsOf: buffer[..<count])
            if data.count > maximumFileSize {
                throw EnvironmentError(
                    .fileUnreadable,
                    "is larger than \(maximumFileSize >> 20) MiB, which no configuration or schema file needs",
                    file: path, hint: "Check that it is the file you meant (`ls -lL \(path)`)")
            }
        }
        return data
    }
}
