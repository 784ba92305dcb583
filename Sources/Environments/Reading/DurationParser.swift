/// Parses durations written with systemd's time units (`systemd.time(7)`): `500ms`, `1.5s`,
/// `2min`, `1h 30min`, `100us`; a bare number is seconds.
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

package enum DurationParser {
    private static let units: [(names: [String], nanoseconds: Double)] = [
        (["ns", "nsec"], 1),
        (["us", "usec", "µs"], 1e3),
        (["ms", "msec"], 1e6),
        (["s", "sec", "second", "seconds"], 1e9),
        (["m", "min", "minute", "minutes"], 60e9),
        (["h", "hr", "hour", "hours"], 3600e9),
        (["d", "day", "days"], 86400e9),
        (["w", "week", "weeks"], 604800e9),
    ]

    package static func parse(_ text: String) -> Duration? {
        var rest = Substring(text.trimmingWhitespace())
        guard !rest.isEmpty else { return nil }
        var total = 0.0
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " }
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count).drop { $0 == " " }
            let unit = rest.prefix { $0.isLetter || $0 == "µ" }
            rest = rest.dropFirst(unit.count)
            if unit.isEmpty {
                total += value * 1e9
            } else if let match = units.first(where: { $0.names.contains(String(unit)) }) {
                total += value * match.nanoseconds
            } else {
                return nil
            }
        }
        guard total.isFinite, total < 9.2e18 else { return nil }
        return .nanoseconds(Int64(total.rounded()))
    }

    /// `duration` as a configuration file would write it, the one form every output uses:
    /// whole units from the largest down (`10s`, `1ms`, `10min`, `1h 30min`, `1.5us` below a
    /// microsecond's precision is written in `ns`); `0s` for zero; negative ones with `-`.
    package static func text(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Nanoseconds, as Int64 overflows beyond ±292 years: past that, real seconds.
        let (high, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return "\(Double(seconds))s" }
        var nanoseconds = high + attoseconds / 1_000_000_000
        guard nanoseconds != 0 else { return "0s" }
        let sign = nanoseconds < 0 ? "-" : ""
        nanoseconds = nanoseconds.magnitude > Int64.max.magnitude ? Int64.max : abs(nanoseconds)
        let steps: [(name: String, nanoseconds: Int64)] = [
            ("d", 86_400_000_000_000), ("h", 3_600_000_000_000), ("min", 60_000_000_000), ("s", 1_000_000_000),
            ("ms", 1_000_000), ("us", 1_000), ("ns", 1),
        ]
        var parts: [String] = []
        for step in steps where nanoseconds >= step.nanoseconds {
            parts.append("\(nanoseconds / step.nanoseconds)\(step.name)")
            nanoseconds %= step.nanoseconds
        }
        return sign + parts.joined(separator: " ")
    }
}
