import Foundation

/// What one run measured, printed as a table or as one JSON object.
struct Report {
    var watchers: Int
    var changes: Int
    var members: Int
    /// Whether each fleet wrote its cache on every change.
    var fleetCache: Bool
    /// Until the slowest of the environments applied each change.
    var slowest: Statistics
    /// Until the fastest of the environments applied each change.
    var fastest: Statistics
    /// Until the bare watch received each change, while the environments ran.
    var floor: Statistics
    /// Until the bare watch received each change, with no environment running.
    var floorAlone: Statistics
    /// Until the slowest of as many bare watches as environments received each change, with
    /// no environment running: etcd's fan-out and the watch streams alone.
    var bareSlowest: Statistics
    var failures: [String]

    /// The target on the ratio: p99 within this many times the floor's p99.
    static let ratioTarget = 2.0
    /// The target on the environments' p99, in ms.
    static let p99Target = 50.0

    var ratio: Double { slowest.percentile(99) / floor.percentile(99) }
    var ratioToFloorAlone: Double { slowest.percentile(99) / floorAlone.percentile(99) }
    var ratioToBareSlowest: Double { slowest.percentile(99) / bareSlowest.percentile(99) }
    var ratioMet: Bool { ratio <= Self.ratioTarget }
    var p99Met: Bool { slowest.percentile(99) < Self.p99Target }

    func table() -> String {
        func label(_ text: String) -> String { text.padding(toLength: 46, withPad: " ", startingAt: 0) }
        func row(_ name: String, _ statistics: Statistics) -> String {
            label(name)
                + [statistics.percentile(50), statistics.percentile(99), statistics.max].map {
                    String(format: "%9.2f", $0)
                }.joined() + String(format: "%8d", statistics.count)
        }
        func met(_ met: Bool) -> String { met ? "met: yes" : "met: no" }
        var lines = [
            "fleet-benchmark: \(watchers) watching environments in one process, \(changes) changes, "
                + "\(members)-member etcd cluster" + (fleetCache ? "" : ", no fleet cache"),
            "",
            label("ms from the put until") + "   p50 ms   p99 ms   max ms changes",
            row("\(watchers) environments applied (slowest)", slowest),
            row("\(watchers) environments applied (fastest)", fastest),
            row("bare watch delivered (floor)", floor),
            row("bare watch alone, no environments", floorAlone),
            row("slowest of \(watchers) bare watches, no environments", bareSlowest),
            "",
            String(format: "p99 / floor p99: %.2fx", ratio),
            String(
                format: "(p99 / p99 of the bare watch alone: %.2fx; of the slowest of \(watchers) bare watches: %.2fx)",
                ratioToFloorAlone, ratioToBareSlowest),
            label(String(format: "target: p99 within %.0fx the floor", Self.ratioTarget)) + met(ratioMet),
            label(String(format: "target: p99 under %.0f ms", Self.p99Target)) + met(p99Met),
            "failures (timeouts, failed puts): \(failures.count)",
        ]
        lines += failures.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }

    func json() throws -> String {
        func figures(_ statistics: Statistics) -> [String: Any] {
            [
                "p50": rounded(statistics.percentile(50)), "p99": rounded(statistics.percentile(99)),
                "max": rounded(statistics.max), "count": statistics.count,
            ]
        }
        let object: [String: Any] = [
            "watchers": watchers, "changes": changes, "members": members, "fleet_cache": fleetCache,
            "environments_applied_slowest_ms": figures(slowest),
            "environments_applied_fastest_ms": figures(fastest),
            "bare_watch_floor_ms": figures(floor),
            "bare_watch_alone_ms": figures(floorAlone),
            "bare_watches_slowest_ms": figures(bareSlowest),
            "ratio_p99_to_floor_p99": rounded(ratio),
            "ratio_p99_to_floor_alone_p99": rounded(ratioToFloorAlone),
            "ratio_p99_to_bare_watches_slowest_p99": rounded(ratioToBareSlowest),
            "targets": [
                "p99_within_2x_floor": ratioMet, "p99_under_50_ms": p99Met,
            ],
            "failures": failures,
        ]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Three decimals; NaN (no samples) becomes -1, which JSON can hold.
    private func rounded(_ value: Double) -> Double {
        value.isFinite ? (value * 1000).rounded() / 1000 : -1
    }
}
