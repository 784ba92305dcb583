/// Percentiles of a set of samples (nearest-rank), for both benchmark executables.
package struct Statistics: Sendable {
    /// The samples, sorted.
    package let sorted: [Double]

    package init(_ samples: [Double]) {
        sorted = samples.sorted()
    }

    package var count: Int { sorted.count }
    package var min: Double { sorted.first ?? .nan }
    package var max: Double { sorted.last ?? .nan }
    package var median: Double { percentile(50) }

    /// The nearest-rank percentile `p` (0–100).
    package func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }
}

extension Duration {
    /// The duration in nanoseconds, as a `Double`.
    package var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
    }

    /// The duration in milliseconds, as a `Double`.
    package var milliseconds: Double { nanoseconds / 1e6 }
}
