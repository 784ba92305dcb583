#if os(Linux)
    import Glibc

    /// A unix datagram socket bound in a fresh temporary directory, removed on release, or
    /// in the abstract namespace as `@name` (as systemd accepts in `NOTIFY_SOCKET`).
    final class DatagramReceiver {
        let directory: String
        let path: String
        private let descriptor: Int32

        init(abstract: Bool = false) throws {
            let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
            var template = Array("\(base)/sd-tests-XXXXXX".utf8CString)
            guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) })
            else { throw SystemCallError("mkdtemp") }
            directory = String(cString: created)
            let uniqueName = directory.split(separator: "/").last.map(String.init) ?? "sd-tests"
            path = abstract ? "@" + uniqueName : directory + "/socket"
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { throw SystemCallError("socket") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(path.utf8)
            if abstract { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
            let length = abstract ? pathOffset + bytes.count : MemoryLayout<sockaddr_un>.size
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(length))
                }
            }
            guard result == 0 else { throw SystemCallError("bind") }
        }

        deinit {
            close(descriptor)
            if !path.hasPrefix("@") { unlink(path) }
            rmdir(directory)
        }

        /// The next datagram, or `nil` if none arrives within `timeout`.
        func receive(timeout: Duration = .seconds(10)) -> [UInt8]? {
            let milliseconds =
                Int32(timeout.components.seconds * 1000)
                + Int32(timeout.components.attoseconds / 1_000_000_000_000_000)
            var descriptors = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptors, 1, milliseconds) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 1 << 20)
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            guard count >= 0 else { return nil }
            return Array(buffer.prefix(count))
        }

        /// The next datagram as text, waiting without holding a thread of the cooperative pool:
        /// for tests whose sender is a task (with two cores, a blocking wait could hold the
        /// thread that task needs).
        func nextText(timeout: Duration = .seconds(10)) async -> String? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let bytes = receive(timeout: .zero) { return String(decoding: bytes, as: UTF8.self) }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return nil
        }

        /// The next datagram as text.
        func receiveText(timeout: Duration = .seconds(10)) -> String? {
            receive(timeout: timeout).map { String(decoding: $0, as: UTF8.self) }
        }

        /// The next datagram decoded as a native-protocol journal entry.
        func receiveEntry(timeout: Duration = .seconds(10)) throws -> DecodedJournalEntry? {
            try receive(timeout: timeout).map(DecodedJournalEntry.init(datagram:))
        }
    }
#endif
