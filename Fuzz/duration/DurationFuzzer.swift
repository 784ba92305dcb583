// libFuzzer target for the duration parser (`500ms`, `1.5s`, `1h 30min`, a bare number of seconds).
//
// Any text must parse without trapping (the sum is a Double converted to Int64 nanoseconds).
// Whenever the parser returns a duration, it must be:
// - non-negative and below the parser's limit;
// - the exact value of the text within rounding: each number is re-read here as an exact
//   decimal, multiplied by the unit's length (systemd.time(7)) in 128-bit integers, and summed;
// - monotonic: a larger first number (a `1` put in front of it) or one more component never
//   gives less;
// - stable under formatting: written back as `1w 2d 3h 4min 5s 6ms 7us 8ns` and parsed again, it
//   gives the same value (exactly below 2^53 ns, where a Double holds every integer).
// Built by Fuzz/run.sh with Sources/Environments/Reading/DurationParser.swift.

import Foundation

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDuration(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: pointer, count: size), as: UTF8.self)
    guard let duration = DurationParser.parse(text) else { return 0 }
    let value = DurationCheck.nanoseconds(duration)
    guard value >= 0, value < 9_200_000_000_000_000_000 else { fatalError("\(text.debugDescription) gave \(value) ns") }

    guard let exact = DurationCheck.exactAttonanoseconds(text) else {
        fatalError("\(text.debugDescription) parsed to \(value) ns but is not of the documented form")
    }
    let error = abs(Double(Int128(value) * DurationCheck.attoPerNano - exact.value) / 1e18)
    let tolerance = 0.5 + 1e-3 + Double(exact.value) / 1e18 * Double(2 * exact.components + 2) * 0x1p-53
    guard error <= tolerance else {
        fatalError("\(text.debugDescription) parsed to \(value) ns, exactly \(Double(exact.value) / 1e18) ns")
    }

    let trimmed = text.trimmingCharacters(in: .whitespaces)
    for larger in ["1" + trimmed, trimmed + " 1ns"] {
        if let other = DurationParser.parse(larger), other < duration {
            fatalError("\(larger.debugDescription) gave \(other), less than \(duration) for \(text.debugDescription)")
        }
    }

    let formatted = DurationCheck.format(value)
    guard let again = DurationParser.parse(formatted).map(DurationCheck.nanoseconds) else {
        fatalError("\(formatted.debugDescription), formatted from \(text.debugDescription), does not parse")
    }
    let exactlyRepresentable = value < 1 << 53
    guard again == value || (!exactlyRepresentable && Double(abs(again - value)) <= Double(value) * 0x1p-50) else {
        fatalError(
            "\(text.debugDescription) gave \(value) ns, its formatting \(formatted.debugDescription) \(again) ns")
    }
    return 0
}

enum DurationCheck {
    static let attoPerNano: Int128 = 1_000_000_000_000_000_000

    /// systemd.time(7)'s units that the parser documents, in nanoseconds.
    static let units: [String: Int128] = [
        "ns": 1, "nsec": 1,
        "us": 1_000, "usec": 1_000, "µs": 1_000,
        "ms": 1_000_000, "msec": 1_000_000,
        "s": 1_000_000_000, "sec": 1_000_000_000, "second": 1_000_000_000, "seconds": 1_000_000_000,
        "m": 60_000_000_000, "min": 60_000_000_000, "minute": 60_000_000_000, "minutes": 60_000_000_000,
        "h": 3_600_000_000_000, "hr": 3_600_000_000_000, "hour": 3_600_000_000_000, "hours": 3_600_000_000_000,
        "d": 86_400_000_000_000, "day": 86_400_000_000_000, "days": 86_400_000_000_000,
        "w": 604_800_000_000_000, "week": 604_800_000_000_000, "weeks": 604_800_000_000_000,
    ]

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The exact value of `text` in 10^-18 ns, and its number of components; nil unless the
    /// text is (after trimming) components of a decimal number and an optional unit (seconds
    /// without one), separated by spaces.
    static func exactAttonanoseconds(_ text: String) -> (value: Int128, components: Int)? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces)).unicodeScalars[...]
        var total: Int128 = 0
        var components = 0
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " }
            let number = rest.prefix { ("0"..."9").contains($0) || $0 == "." }
            rest = rest.dropFirst(number.count).drop { $0 == " " }
            let unit = rest.prefix { $0.properties.isAlphabetic || $0 == "µ" }
            rest = rest.dropFirst(unit.count)
            guard let scale = unit.isEmpty ? 1_000_000_000 : units[String(Substring(unit))],
                let amount = decimal(Substring(number), times: scale)
            else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(amount)
            guard !overflow else { return nil }
            total = sum
            components += 1
        }
        return components > 0 ? (total, components) : nil
    }

    /// `digits` (a decimal with at most one point and a digit) times `scale` ns, in 10^-18 ns;
    /// fraction digits beyond the 18th are dropped (less than 10^-3 ns for a week).
    private static func decimal(_ digits: Substring, times scale: Int128) -> Int128? {
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts.contains(where: { $0.contains(".") }), digits.contains(where: \.isNumber)
        else { return nil }
        let whole = parts[0].drop { $0 == "0" }
        let fraction = parts.count == 2 ? parts[1].prefix(18) : ""
        guard whole.count <= 20, let wholeValue = Int128(whole.isEmpty ? "0" : String(whole)),
            let fractionValue = Int128(fraction.padding(toLength: 18, withPad: "0", startingAt: 0))
        else { return nil }
        let (wholeScaled, overflow1) = wholeValue.multipliedReportingOverflow(by: scale * attoPerNano)
        let (fractionScaled, overflow2) = fractionValue.multipliedReportingOverflow(by: scale)
        guard !overflow1, !overflow2 else { return nil }
        return wholeScaled + fractionScaled
    }

    /// `value` ns in systemd's style: `1w 2d 3h 4min 5s 6ms 7us 8ns`, `0` for zero.
    static func format(_ value: Int64) -> String {
        let steps: [(String, Int64)] = [
            ("w", 604_800_000_000_000), ("d", 86_400_000_000_000), ("h", 3_600_000_000_000),
            ("min", 60_000_000_000), ("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1),
        ]
        var rest = value
        var parts: [String] = []
        for (name, length) in steps where rest >= length {
            parts.append("\(rest / length)\(name)")
            rest %= length
        }
        return parts.isEmpty ? "0" : parts.joined(separator: " ")
    }
}
