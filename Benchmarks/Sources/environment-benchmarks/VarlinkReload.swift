import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal varlink client for the benchmark: one `Reload` call, waiting for the reply.
/// (The package's own client is `package`-internal to swift-environments.)
enum VarlinkReload {
    private static let message = Array("{\"method\":\"io.swiftenvironments.Configuration.Reload\"}\u{0}".utf8)

    static func call(_ path: String) {
        let descriptor = connected(path)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard send(descriptor, message, message.count, Int32(MSG_NOSIGNAL)) == message.count else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count <= 0 || buffer[..<count].contains(0) { return }
        }
    }

    /// What the daemon answered: the verdict's outcome (`applied`, `unchanged`), or the
    /// error's name and description.
    struct Verdict: Sendable {
        var outcome: String?
        var error: String?
    }

    /// A call that got no answer.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One `Reload` call and its verdict, waiting at most `timeout` for each read.
    static func reply(_ path: String, timeout: Duration) -> Result<Verdict, Failure> {
        let descriptor = connected(path)
        guard descriptor >= 0 else {
            return .failure(Failure(description: "connect \(path): \(String(cString: strerror(errno)))"))
        }
        defer { close(descriptor) }
        var limit = timeval(
            tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard send(descriptor, message, message.count, Int32(MSG_NOSIGNAL)) == message.count else {
            return .failure(Failure(description: "send: \(String(cString: strerror(errno)))"))
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                return .failure(Failure(description: "no reply: \(String(cString: strerror(errno)))"))
            }
            if count == 0 { return .failure(Failure(description: "connection closed before the reply")) }
            if let end = buffer[..<count].firstIndex(of: 0) {
                reply.append(contentsOf: buffer[..<end])
                break
            }
            reply.append(contentsOf: buffer[..<count])
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any] else {
            return .failure(
                Failure(description: "not a JSON object: \(String(decoding: reply.prefix(200), as: UTF8.self))"))
        }
        let verdict = (object["parameters"] as? [String: Any])?["verdict"] as? [String: Any]
        var result = Verdict(outcome: verdict?["outcome"] as? String)
        if let error = object["error"] as? String {
            let description = (verdict?["error"] as? [String: Any])?["description"] as? String
            result.error = error + (description.map { ": \($0)" } ?? "")
        }
        return .success(result)
    }

    /// A stream socket connected to `path`, or -1.
    private static func connected(_ path: String) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let saved = errno
            close(descriptor)
            errno = saved
            return -1
        }
        return descriptor
    }
}
