import BenchmarkFixtures
import Environments
import EnvironmentsDaemon
import Foundation
import Synchronization

/// Minutes of reloads at a steady 100 a second through a running `EnvironmentService`,
/// while four threads read values that belong together, with the process's memory sampled
/// every 10 s: whether reads ever see a torn or older configuration, and whether memory
/// stays flat.
///
/// Every reload writes a new `Environments.plist` (temporary file, then `rename(2)`) in which
/// `A` (integer), `B` (string), `C` (integer) and 300 other keys all carry the same number
/// `n`; the file with number `n` must become generation `base + n`. A read takes one
/// `snapshot` and checks that `A`, `B`, `C` and one of the other keys (a different one each
/// read) all hold `generation - base`, and that its thread never sees the generation go back.
struct SoakBenchmark {
    struct ReaderResult: Sendable {
        var reads = 0
        var violations = 0
        var firstGeneration: UInt64 = 0
        var lastGeneration: UInt64 = 0
        /// The first few violations, described.
        var messages: [String] = []
    }

    struct Sample: Sendable {
        /// Seconds since the reloads and reads started.
        var seconds: Double
        var residentBytes: Int
        /// Bytes malloc handed out and not yet taken back, large (mmapped) allocations included.
        var heapBytes: Int
    }

    struct Results: Sendable {
        var minutes = 0.0
        var elapsedSeconds = 0.0
        var watchFiles = false
        var keyCount = 0
        var targetRate = 0.0
        /// `Reload` calls made.
        var reloadsRequested = 0
        /// Generations the environment advanced by.
        var reloadsApplied = 0
        /// Calls answered `unchanged` (with the file watcher on: it applied the file first).
        var reloadsUnchanged = 0
        /// Calls that were rejected, not answered, or after which the file was not live.
        var reloadFailures = 0
        var failureMessages: [String] = []
        /// Pacing slots given up because a reload ran more than one interval late.
        var slotsSkipped = 0
        /// Milliseconds per `Reload` round trip (connect, call, verdict).
        var roundTrips = Statistics([])
        var readerCount = 0
        var readers: [ReaderResult] = []
        var samples: [Sample] = []
        var warmUpSeconds = 0.0

        var achievedRate: Double { elapsedSeconds > 0 ? Double(reloadsRequested) / elapsedSeconds : 0 }
        var violations: Int { readers.reduce(0) { $0 + $1.violations } }
        var passed: Bool { violations == 0 && reloadFailures == 0 && readers.count == readerCount }
        var reloadPath: String {
            "control socket Reload (as envctl)" + (watchFiles ? ", file watcher on" : ", file watcher off")
        }

        /// The samples taken after the warm-up.
        var settledSamples: [Sample] { samples.filter { $0.seconds >= warmUpSeconds } }

        /// Least-squares slope of `value` over the settled samples, in KiB per minute; `nil`
        /// with fewer than three of them (two samples 2 s apart at the end of a short run say
        /// nothing).
        func slope(_ value: KeyPath<Sample, Int>) -> Double? {
            let points = settledSamples.map { ($0.seconds / 60, Double($0[keyPath: value]) / 1024) }
            guard points.count >= 3 else { return nil }
            let meanX = points.reduce(0) { $0 + $1.0 } / Double(points.count)
            let meanY = points.reduce(0) { $0 + $1.1 } / Double(points.count)
            let covariance = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
            let variance = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
            return variance > 0 ? covariance / variance : nil
        }
    }

    let minutes: Double
    let watchFiles: Bool
    let readerCount: Int
    let otherKeyCount = 300
    let reloadInterval = Duration.milliseconds(10)
    let sampleInterval = Duration.seconds(10)

    func run(progress: (String) -> Void) async throws -> Results {
        guard minutes > 0, minutes.isFinite else { throw BenchmarkError("--soak-minutes must be more than 0") }
        guard readerCount >= 0 else { throw BenchmarkError("--soak-readers must be 0 or more") }
        var results = Results()
        results.minutes = minutes
        results.watchFiles = watchFiles
        results.readerCount = readerCount
        results.keyCount = otherKeyCount + 3
        results.targetRate = 1 / (reloadInterval.nanoseconds / 1e9)
        let duration = Duration.milliseconds(Int((minutes * 60_000).rounded()))
        // A minute, or a tenth of a shorter run.
        results.warmUpSeconds = min(60, minutes * 6)

        let directory = try Fixtures.makeDirectory("soak")
        let file = directory + "/Environments.plist"
        let others = Fixtures.keys(otherKeyCount)
        let contents = File(others: others)
        try contents.data(0).write(to: URL(fileURLWithPath: file))
        let sink = try DatagramSink(directory: directory)
        defer { sink.close() }
        let environment = try Environment(options: Fixtures.options(directory))
        let service = await BenchmarkService.start(environment, in: directory, journal: sink, watchFiles: watchFiles)
        defer { service.cancel() }

        let initial = environment.snapshot
        guard case .integer(0)? = initial.value(forKey: "A"), case .string("0")? = initial.value(forKey: "B"),
            case .integer(0)? = initial.value(forKey: "C"), initial.leafKeys.count == otherKeyCount + 3,
            others.allSatisfy({ initial.value(forKey: $0) == .string(Fixtures.value($0, version: 0)) })
        else {
            throw BenchmarkError("soak: the first file did not load as written: \(initial)")
        }
        let base = Int(initial.generation)

        progress(
            String(
                format: "soak: %.1f min, %.0f reloads/s (%@), %d reading threads, %d keys",
                minutes, results.targetRate, results.reloadPath, readerCount, results.keyCount))
        let stop = StopFlag()
        let finished = DispatchGroup()
        let readerResults = Mutex<[Int: ReaderResult]>([:])
        let readCounts = (0..<readerCount).map { _ in ReadCount() }
        for thread in 0..<readerCount {
            finished.enter()
            let count = readCounts[thread]
            Thread {
                let result = Self.read(
                    environment, base: base, others: others, offset: thread * others.count / readerCount,
                    stop: stop, count: count)
                readerResults.withLock { $0[thread] = result }
                finished.leave()
            }.start()
        }
        let reloader = Reloader(
            file: file, socket: service.socket, contents: contents, environment: environment, base: base,
            interval: reloadInterval, capacity: Int(duration.nanoseconds / reloadInterval.nanoseconds * 1.2) + 1000)
        let reloaded = Mutex<Reloader.Outcome?>(nil)
        finished.enter()
        let clock = ContinuousClock()
        let started = clock.now
        let end = started + duration
        Thread {
            reloaded.withLock { $0 = reloader.run(until: end, stop: stop) }
            finished.leave()
        }.start()

        // Sampled here, on a task that sleeps between samples, into room reserved up front.
        results.samples.reserveCapacity(Int(duration.nanoseconds / sampleInterval.nanoseconds) + 4)
        var next = started
        while true {
            let now = clock.now
            let sample = Sample(
                seconds: (now - started).nanoseconds / 1e9, residentBytes: Heap.residentBytes,
                heapBytes: Heap.inUse + Heap.mapped)
            results.samples.append(sample)
            let reads = readCounts.map { $0.value.load(ordering: .relaxed) }
            progress(
                String(
                    format: "soak: %@ of %@: %d reloads, %d reads, RSS %d KiB, heap %d KiB",
                    Self.clockTime(sample.seconds), Self.clockTime(duration.nanoseconds / 1e9),
                    reloader.requested.load(ordering: .relaxed), reads.reduce(0, +), sample.residentBytes / 1024,
                    sample.heapBytes / 1024))
            if now >= end { break }
            next = next + sampleInterval
            try? await Task.sleep(until: min(next, end), clock: clock)
            if stop.isSet { break }  // a reload failed so badly that the reloader gave up
        }

        stop.set()
        await withCheckedContinuation { continuation in
            finished.notify(queue: .global()) { continuation.resume() }
        }
        await service.stop()

        let outcome = reloaded.withLock { $0 }!
        results.elapsedSeconds = outcome.elapsedSeconds
        results.reloadsRequested = outcome.requested
        results.reloadsApplied = outcome.lastGeneration - base
        results.reloadsUnchanged = outcome.unchanged
        results.reloadFailures = outcome.failures
        results.failureMessages = outcome.messages
        results.slotsSkipped = outcome.skipped
        results.roundTrips = Statistics(outcome.roundTrips)
        let readers = readerResults.withLock { $0 }
        results.readers = (0..<readerCount).compactMap { readers[$0] }
        return results
    }

    /// The `Environments.plist` with number `n`: `A`, `B`, `C` and every other key carry it.
    /// Written as XML text from pieces made once: `PropertyListSerialization` would take
    /// several times as long as the reload it feeds, and leave the daemon less of the CPU.
    struct File: Sendable {
        private let pieces: [String]

        init(others: [String]) {
            var pieces = [
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">
                <dict>
                \t<key>Common</key>
                \t<dict>
                \t\t<key>A</key>
                \t\t<integer>
                """,
                "</integer>\n\t\t<key>B</key>\n\t\t<string>",
                "</string>\n\t\t<key>C</key>\n\t\t<integer>",
            ]
            var closing = "</integer>\n"
            for key in others {
                // Fixtures.value(key, version: n), split before its number.
                let value = Fixtures.value(key, version: 0).dropLast()
                pieces.append(closing + "\t\t<key>\(key)</key>\n\t\t<string>\(value)")
                closing = "</string>\n"
            }
            pieces.append(closing + "\t</dict>\n\t<key>Release</key>\n\t<dict/>\n</dict>\n</plist>\n")
            self.pieces = pieces
        }

        func data(_ n: Int) -> Data {
            var text = ""
            text.reserveCapacity(pieces.reduce(0) { $0 + $1.utf8.count } + pieces.count * 20)
            let number = String(n)
            for piece in pieces.dropLast() {
                text += piece
                text += number
            }
            text += pieces[pieces.count - 1]
            return Data(text.utf8)
        }
    }

    /// `m:ss`.
    static func clockTime(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    // MARK: Readers

    /// Reads until `stop`: each read one snapshot, checked whole.
    private static func read(
        _ environment: Environment, base: Int, others: [String], offset: Int, stop: StopFlag, count: ReadCount
    ) -> ReaderResult {
        var result = ReaderResult()
        var last: UInt64 = 0
        var other = offset % others.count
        result.firstGeneration = environment.snapshot.generation
        while true {
            if result.reads & 0xFFF == 0 {
                count.value.store(result.reads, ordering: .relaxed)
                if stop.isSet { break }
            }
            let snapshot = environment.snapshot
            let generation = snapshot.generation
            let expected = Int(generation) - base
            let otherKey = others[other]
            other = other + 1 == others.count ? 0 : other + 1
            result.reads += 1

            var problem: String?
            if generation < last {
                problem = "generation went back from \(last) to \(generation)"
            } else if case .integer(let a)? = snapshot.value(forKey: "A"),
                case .string(let b)? = snapshot.value(forKey: "B"),
                case .integer(let c)? = snapshot.value(forKey: "C"),
                case .string(let value)? = snapshot.value(forKey: otherKey)
            {
                if a != expected || Int(b) != expected || c != expected || !value.hasSuffix("/v\(expected)") {
                    problem =
                        "generation \(generation) (file \(expected)): A = \(a), B = \(b), C = \(c), \(otherKey) = \(value)"
                }
            } else {
                problem = "generation \(generation): A, B, C or \(otherKey) missing or of another type"
            }
            if let problem {
                result.violations += 1
                if result.messages.count < 5 { result.messages.append(problem) }
            }
            last = max(last, generation)
        }
        result.lastGeneration = last
        count.value.store(result.reads, ordering: .relaxed)
        return result
    }

    // MARK: Reloads

    /// Writes a new file and calls `Reload` on the control socket every `interval`, on a
    /// thread of its own.
    final class Reloader: Sendable {
        struct Outcome: Sendable {
            var requested = 0
            var unchanged = 0
            var failures = 0
            var skipped = 0
            var messages: [String] = []
            var roundTrips: [Double] = []
            var lastGeneration = 0
            var elapsedSeconds = 0.0
        }

        let file: String
        let socket: String
        let contents: File
        let environment: Environment
        let base: Int
        let interval: Duration
        /// Milliseconds per round trip, in room reserved when the reloader is made (before the
        /// first memory sample), so that collecting them does not grow the heap being measured.
        private let roundTrips: Mutex<[Double]>
        /// `Reload` calls so far, for progress.
        let requested = Atomic<Int>(0)

        init(
            file: String, socket: String, contents: File, environment: Environment, base: Int, interval: Duration,
            capacity: Int
        ) {
            self.file = file
            self.socket = socket
            self.contents = contents
            self.environment = environment
            self.base = base
            self.interval = interval
            var room: [Double] = []
            room.reserveCapacity(capacity)
            roundTrips = Mutex(room)
        }

        /// Reloads until `end` (or `stop`).
        func run(until end: ContinuousClock.Instant, stop: StopFlag) -> Outcome {
            var outcome = Outcome()
            let clock = ContinuousClock()
            let started = clock.now
            var next = started
            func fail(_ message: String) {
                outcome.failures += 1
                if outcome.messages.count < 10 { outcome.messages.append(message) }
            }
            while !stop.isSet && clock.now < end {
                // The number the next generation must carry: after a reload that did not
                // apply, the same number again, so that files and generations stay in step.
                let n = Int(environment.snapshot.generation) + 1 - base
                do {
                    try Fixtures.replace(file, with: contents.data(n))
                } catch {
                    fail("writing file \(n): \(error)")
                    stop.set()
                    break
                }
                let called = clock.now
                let reply = VarlinkReload.reply(socket, timeout: .seconds(10))
                let roundTrip = (clock.now - called).milliseconds
                outcome.requested += 1
                requested.store(outcome.requested, ordering: .relaxed)
                roundTrips.withLock { if $0.count < $0.capacity { $0.append(roundTrip) } }
                let generation = Int(environment.snapshot.generation)
                switch reply {
                case .failure(let error):
                    fail("file \(n): \(error)")
                case .success(let verdict):
                    if let error = verdict.error {
                        fail("file \(n): \(error)")
                    } else if generation != base + n {
                        fail(
                            "file \(n): answered \(verdict.outcome ?? "?"), yet generation is \(generation), not \(base + n)"
                        )
                    } else if verdict.outcome == "unchanged" {
                        outcome.unchanged += 1
                    } else if verdict.outcome != "applied" {
                        fail("file \(n): unexpected verdict \(verdict.outcome ?? "none")")
                    }
                }
                next = next + interval
                let now = clock.now
                if next > now {
                    Thread.sleep(forTimeInterval: (next - now).nanoseconds / 1e9)
                } else if now - next > interval {
                    // More than a slot behind: pace on from now rather than burst to catch up.
                    outcome.skipped += Int((now - next).nanoseconds / interval.nanoseconds)
                    next = now
                }
            }
            outcome.elapsedSeconds = (clock.now - started).nanoseconds / 1e9
            outcome.roundTrips = roundTrips.withLock { $0 }
            outcome.lastGeneration = Int(environment.snapshot.generation)
            return outcome
        }
    }
}

/// Set once, read often: a relaxed load that no thread writes while readers poll it.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}

/// One reading thread's count of reads, published now and then for progress; an object of its
/// own so that the threads' counts do not share a cache line.
final class ReadCount: Sendable {
    let value = Atomic<Int>(0)
    private let padding = (0, 0, 0, 0, 0, 0, 0, 0)
}
