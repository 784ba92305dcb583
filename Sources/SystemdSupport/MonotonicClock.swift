#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `CLOCK_MONOTONIC` in microseconds: the clock systemd expects in `MONOTONIC_USEC=`, shared by
/// every process on the machine, so a reload command and a daemon can compare times.
package enum MonotonicClock {
    /// The current `CLOCK_MONOTONIC` time in microseconds.
    package static func nowMicroseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1_000
    }
}
