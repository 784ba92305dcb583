import BenchmarkFixtures
import Dispatch
import Synchronization

/// Times operations that take nanoseconds by running many of them per sample.
enum Timing {
    /// The number of rounds that take about `sampleTime`.
    static func calibrate(sampleTime: Duration, _ round: () -> Void) -> Int {
        var rounds = 1
        while true {
            let elapsed = time(rounds: rounds, round)
            if elapsed >= sampleTime / 4 || rounds >= 1 << 30 {
                let scale = sampleTime.nanoseconds / Swift.max(elapsed.nanoseconds, 1)
                return Swift.max(1, Int(Double(rounds) * scale))
            }
            rounds *= 4
        }
    }

    /// How long `rounds` calls of `round` take.
    static func time(rounds: Int, _ round: () -> Void) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<rounds { round() }
        return clock.now - start
    }

    /// Nanoseconds per operation, where each call of `round` performs `operationsPerRound`
    /// operations: the fastest of `samples` samples of about `sampleTime` each, after a
    /// warm-up. The fastest, not the median: on a shared machine, other work only ever adds
    /// time, so the fastest sample is the least disturbed one.
    static func nanosecondsPerOperation(
        operationsPerRound: Int, samples: Int = 7, sampleTime: Duration = .milliseconds(100), _ round: () -> Void
    ) -> (nanoseconds: Double, rounds: Int) {
        let rounds = calibrate(sampleTime: sampleTime, round)
        _ = time(rounds: rounds, round)  // warm-up
        let results = (0..<samples).map { _ in
            time(rounds: rounds, round).nanoseconds / Double(rounds * operationsPerRound)
        }
        return (Statistics(results).min, rounds)
    }

    /// Nanoseconds per operation on each of `threads` threads running `round` at the same
    /// time, `rounds` rounds each: the fastest over `samples` samples of the threads' mean.
    /// `round` gets the thread's number (0 to `threads` - 1).
    static func concurrentNanosecondsPerOperation(
        threads: Int, rounds: Int, operationsPerRound: Int, samples: Int = 11, _ round: @Sendable (Int) -> Void
    ) -> Double {
        let results = (0..<samples).map { _ in
            let perThread = Mutex<[Double]>([])
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                let elapsed = time(rounds: rounds) { round(thread) }
                perThread.withLock { $0.append(elapsed.nanoseconds / Double(rounds * operationsPerRound)) }
            }
            let values = perThread.withLock { $0 }
            return values.reduce(0, +) / Double(values.count)
        }
        return Statistics(results).min
    }
}
