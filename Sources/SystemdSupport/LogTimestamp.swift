#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Local wall-clock timestamps for human-readable log lines.
enum LogTimestamp {
    /// The current local time as `2025-01-31T14:05:09.123+0100`.
    static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var seconds = time.tv_sec
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return "<unknown time>" }
        let milliseconds = Int(time.tv_nsec) / 1_000_000
        let fraction = String(milliseconds)
        let padding = String(repeating: "0", count: max(0, 3 - fraction.count))
        return format("%Y-%m-%dT%H:%M:%S", &local) + "." + padding + fraction
            + format("%z", &local)
    }

    private static func format(_ pattern: String, _ local: inout tm) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, pattern, &local)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
