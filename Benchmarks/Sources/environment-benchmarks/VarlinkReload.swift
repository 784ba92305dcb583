import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal varlink client for the benchmark: one `Reload` call, waiting for the reply.
/// (The package's own client is `package`-internal to swift-environments.)
enum VarlinkReload {
    static func call(_ path: String) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { return }
        let message = Array("{\"method\":\"io.swiftenvironments.Configuration.Reload\"}\u{0}".utf8)
        guard send(descriptor, message, message.count, Int32(MSG_NOSIGNAL)) == message.count else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 || buffer[..<count].contains(0) { return }
        }
    }
}
