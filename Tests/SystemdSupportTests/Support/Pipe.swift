#if os(Linux)
    import Glibc

    /// A pipe whose write end stands in for standard error in tests.
    final class Pipe {
        let readEnd: Int32
        let writeEnd: Int32

        init() throws {
            var descriptors: [Int32] = [-1, -1]
            guard pipe(&descriptors) == 0 else { throw SystemCallError("pipe") }
            readEnd = descriptors[0]
            writeEnd = descriptors[1]
        }

        deinit {
            close(readEnd)
            close(writeEnd)
        }

        /// Everything written so far (the write end stays open).
        func readAvailable() -> String {
            var result: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                var descriptors = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptors, 1, 0) == 1 else { break }
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                result += buffer.prefix(count)
            }
            return String(decoding: result, as: UTF8.self)
        }
    }
#endif
