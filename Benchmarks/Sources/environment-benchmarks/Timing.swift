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

    /// What one contender of ``interleavedConcurrentNanosecondsPerOperation(threads:samples:_:)``
    /// runs: `rounds` calls of `round` on each thread, each performing `operationsPerRound`
    /// operations.
    struct ConcurrentContender: Sendable {
        var rounds: Int
        var operationsPerRound: Int
        var round: @Sendable (Int) -> Void
    }

    /// Nanoseconds per operation for each contender, on each of `threads` threads running its
    /// `round` at the same time, `rounds` rounds each: the fastest over `samples` samples of the
    /// threads' mean, the contenders' samples interleaved (one of each in turn), in their order.
    ///
    /// On a virtual machine, two threads sometimes run for seconds at a time as if they shared
    /// one core (other guests on the same processors): every two-thread figure then doubles,
    /// the dictionary's as ours. Samples taken one of each in turn spread such a spell over
    /// every contender, so the fastest sample of each is taken in the same conditions, and
    /// their ratios stay comparable.
    static func interleavedConcurrentNanosecondsPerOperation(
        threads: Int, samples: Int = 11, _ contenders: [ConcurrentContender]
    ) -> [Double] {
        var results = Array(repeating: [Double](), count: contenders.count)
        for _ in 0..<samples {
            for (index, contender) in contenders.enumerated() {
                let perThread = Mutex<[Double]>([])
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    let elapsed = time(rounds: contender.rounds) { contender.round(thread) }
                    let nanoseconds = elapsed.nanoseconds / Double(contender.rounds * contender.operationsPerRound)
                    perThread.withLock { $0.append(nanoseconds) }
                }
                let values = perThread.withLock { $0 }
                results[index].append(values.reduce(0, +) / Double(values.count))
            }
        }
        return results.map { Statistics($0).min }
    }
}
