#if Fleet
    import Foundation

    /// Percentiles of the arrival times (nearest-rank), as the Benchmarks package's
    /// `BenchmarkFixtures.Statistics` computes them (this executable is in the root package,
    /// which cannot see that one).
    struct Statistics: Sendable {
        /// The samples, sorted.
        let sorted: [Double]

        init(_ samples: [Double]) {
            sorted = samples.sorted()
        }

        var count: Int { sorted.count }
        var max: Double { sorted.last ?? .nan }
        var median: Double { percentile(50) }

        /// The nearest-rank percentile `p` (0–100).
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
            return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
        }
    }

    extension Duration {
        /// The duration in milliseconds, as a `Double`.
        var milliseconds: Double {
            Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
        }
    }

    /// Writes a progress line (`... message`) to standard error; the results alone go to
    /// standard output (as the Benchmarks package's executables do).
    func progress(_ message: String) {
        FileHandle.standardError.write(Data("... \(message)\n".utf8))
    }

    /// Warns on standard error when this is a debug build, whose numbers mean little.
    func warnIfDebugBuild() {
        #if DEBUG
            progress("warning: a debug build; numbers mean little (use swift build -c release)")
        #endif
    }
#endif
