#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads `CLOCK_MONOTONIC`, the clock systemd expects in `MONOTONIC_USEC=`.
enum MonotonicClock {
    /// The current `CLOCK_MONOTONIC` time in microseconds.
    static func microseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1_000
    }
}
