#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `CLOCK_MONOTONIC` in microseconds: the clock systemd's `MONOTONIC_USEC=` uses, shared by
/// every process on the machine, so a reload command and a daemon can compare times.
public enum MonotonicClock {
    /// Microseconds of `CLOCK_MONOTONIC` now.
    public static func nowMicroseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1_000
    }
}
