#if Fleet
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// Whole files read with read(2), for what the fleet's programs read (credentials, TLS files,
    /// the cache, the documents to publish), without full Foundation: errors name the cause as
    /// the C library does (`No such file or directory`), not Foundation's `localizedDescription`.
    package enum FleetFiles {
        /// Why a file could not be read: the C library's words for `errno`.
        package struct ReadError: Error, CustomStringConvertible, Sendable {
            /// The `errno` of the failed call.
            package let code: Int32

            package var description: String { String(cString: strerror(code)) }
        }

        /// The whole file at `path` (symbolic links followed).
        ///
        /// - Throws: ``ReadError`` if it cannot be opened or read (a directory cannot be read).
        package static func bytes(_ path: String) throws(ReadError) -> [UInt8] {
            var descriptor: Int32
            repeat { descriptor = open(path, O_RDONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
            guard descriptor >= 0 else { throw ReadError(code: errno) }
            defer { close(descriptor) }
            var status = stat()
            var bytes: [UInt8] = []
            if fstat(descriptor, &status) == 0, status.st_size > 0 { bytes.reserveCapacity(Int(status.st_size)) }
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count == 0 { return bytes }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw ReadError(code: errno)
                }
                bytes.append(contentsOf: buffer[..<count])
            }
        }

        /// The file's text (UTF-8), decoded as `String(decoding:as:)` does.
        package static func text(_ path: String) throws(ReadError) -> String {
            String(decoding: try bytes(path), as: UTF8.self)
        }

        /// Whether something is at `path` (through symbolic links).
        package static func exists(_ path: String) -> Bool {
            var status = stat()
            return stat(path, &status) == 0
        }
    }

    /// Numbers as the fleet's messages print them, without `String(format:)` (full Foundation).
    package enum FleetNumbers {
        /// `value` with one digit after the point, as `%.1f` prints it: `2.3`, `0.0`, `-1.5`;
        /// rounded as the exact binary value is (`0.15` is 0.1499… and gives `0.1`), a true tie
        /// to the even digit.
        package static func oneDecimal(_ value: Double) -> String {
            let product = value * 10
            // Past 2^53 tenths no Double has a fraction left; such a number is no duration nor size.
            guard value.isFinite, abs(product) < 9.0e15 else { return "\(value)" }
            var tenths = product.rounded(.toNearestOrEven)
            // A product that landed on a half: what the rounding of the multiplication took off
            // or added (exact, by a fused multiply-add) says on which side the true value lies.
            if abs(product - product.rounded(.towardZero)) == 0.5 {
                let residual = (-product).addingProduct(value, 10)
                if residual > 0 {
                    tenths = product.rounded(.up)
                } else if residual < 0 {
                    tenths = product.rounded(.down)
                }
            }
            let magnitude = Int64(abs(tenths))
            return "\(tenths.sign == .minus ? "-" : "")\(magnitude / 10).\(magnitude % 10)"
        }
    }
#endif
