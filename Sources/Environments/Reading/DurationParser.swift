/// Parses durations written with systemd's time units (`systemd.time(7)`): `500ms`, `1.5s`,
/// `2min`, `1h 30min`, `100us`; a bare number is seconds.
enum DurationParser {
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

    static func parse(_ text: String) -> Duration? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
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
}
