#if Fleet
    /// A failure that makes the benchmark exit 1.
    struct BenchmarkFailure: Error, CustomStringConvertible {
        var description: String

        init(_ description: String) {
            self.description = description
        }
    }
#endif
