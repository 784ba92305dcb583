import Testing

@testable import FileWatching

extension FileWatchingTests {
    /// The pure pieces: coalescing deadlines, batch merging and the mailbox.
    @Suite struct InternalsTests {
        /// An accumulator with a 50 ms debounce, a 2 ms settle and a 500 ms maximum delay.
        private func makeAccumulator() -> BatchAccumulator {
            BatchAccumulator(
                debounce: .milliseconds(50), settle: .milliseconds(2), maximumDelay: .milliseconds(500))
        }

        @Test func aBurstEndsAfterTheDebounceOrTheMaximumDelay() {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            #expect(accumulator.deadline == nil)
            #expect(accumulator.takeIfDue(at: start + .seconds(10)) == nil)
            accumulator.add(paths: ["a"], at: start)
            #expect(accumulator.deadline == start + .milliseconds(50))
            accumulator.add(paths: ["b"], at: start + .milliseconds(40))
            #expect(accumulator.deadline == start + .milliseconds(90))
            #expect(accumulator.takeIfDue(at: start + .milliseconds(89)) == nil)
            // A stream that never pauses is cut off by the maximum delay.
            accumulator.add(paths: ["c"], at: start + .milliseconds(480))
            #expect(accumulator.deadline == start + .milliseconds(500))
            let batch = accumulator.takeIfDue(at: start + .milliseconds(500))
            #expect(batch == FileChangeBatch(paths: ["a", "b", "c"], eventCount: 3))
            #expect(!accumulator.isCollecting)
            #expect(accumulator.deadline == nil)
        }

        @Test func aBurstOfCompletionEventsIsDueAfterTheSettle() {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            accumulator.add(paths: ["a"], completion: true, at: start)
            #expect(accumulator.deadline == start + .milliseconds(2))
            accumulator.add(paths: ["b"], completion: true, at: start + .milliseconds(1))
            #expect(accumulator.deadline == start + .milliseconds(3))
            #expect(accumulator.takeIfDue(at: start + .milliseconds(2)) == nil)
            let batch = accumulator.takeIfDue(at: start + .milliseconds(3))
            #expect(batch == FileChangeBatch(paths: ["a", "b"], eventCount: 2))
            #expect(!accumulator.isCollecting)
        }

        @Test func aBurstOfInProgressEventsIsDueAfterTheDebounce() {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            accumulator.add(paths: ["a"], completion: false, at: start)
            #expect(accumulator.deadline == start + .milliseconds(50))
            accumulator.add(paths: ["a"], completion: false, at: start + .milliseconds(10))
            #expect(accumulator.deadline == start + .milliseconds(60))
            #expect(accumulator.takeIfDue(at: start + .milliseconds(12)) == nil)
            let batch = accumulator.takeIfDue(at: start + .milliseconds(60))
            #expect(batch == FileChangeBatch(paths: ["a"], eventCount: 2))
        }

        @Test func anInProgressEventAfterACompletionFallsBackToTheDebounce() {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            accumulator.add(paths: ["a"], completion: true, at: start)
            accumulator.add(paths: ["a"], completion: false, at: start + .milliseconds(1))
            #expect(accumulator.deadline == start + .milliseconds(51))
            #expect(accumulator.takeIfDue(at: start + .milliseconds(3)) == nil)
            // Also when both were seen at the same instant, as events from one read are.
            var sameRead = makeAccumulator()
            sameRead.add(paths: ["a"], completion: true, at: start)
            sameRead.add(paths: ["a"], completion: false, at: start)
            #expect(sameRead.deadline == start + .milliseconds(50))
        }

        @Test func aCompletionAfterInProgressEventsSwitchesToTheSettle() {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            // Like a write in place: truncate, write, close.
            accumulator.add(paths: ["a"], completion: false, at: start)
            accumulator.add(paths: ["a"], completion: false, at: start + .milliseconds(1))
            #expect(accumulator.deadline == start + .milliseconds(51))
            accumulator.add(paths: ["a"], completion: true, at: start + .milliseconds(2))
            #expect(accumulator.deadline == start + .milliseconds(4))
            // Like a rename over the file: moved-from and moved-to from one read.
            var rename = makeAccumulator()
            rename.add(paths: ["a"], completion: false, at: start)
            rename.add(paths: ["a"], completion: true, at: start)
            #expect(rename.deadline == start + .milliseconds(2))
            // The last event decides, however the burst went before it.
            accumulator.add(paths: ["a"], completion: false, at: start + .milliseconds(5))
            accumulator.add(paths: ["b"], completion: true, at: start + .milliseconds(6))
            #expect(accumulator.deadline == start + .milliseconds(8))
            let batch = accumulator.takeIfDue(at: start + .milliseconds(8))
            #expect(batch == FileChangeBatch(paths: ["a", "b"], eventCount: 5))
        }

        @Test func theMaximumDelayCapsBothQuietTimes() {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            // In-progress events every 40 ms never leave 50 ms of quiet.
            for milliseconds in stride(from: 0, through: 480, by: 40) {
                accumulator.add(paths: ["a"], completion: false, at: start + .milliseconds(milliseconds))
            }
            #expect(accumulator.deadline == start + .milliseconds(500))
            accumulator.add(paths: ["a"], completion: true, at: start + .milliseconds(499))
            #expect(accumulator.deadline == start + .milliseconds(500))
            #expect(accumulator.takeIfDue(at: start + .milliseconds(499)) == nil)
            #expect(accumulator.takeIfDue(at: start + .milliseconds(500))?.paths == ["a"])
            // The next burst starts afresh: its first event sets the cap and the quiet time.
            accumulator.add(paths: ["b"], completion: false, at: start + .milliseconds(600))
            #expect(accumulator.deadline == start + .milliseconds(650))
        }

        @Test func batchesMerge() {
            var batch = FileChangeBatch(paths: ["a"], eventCount: 2)
            #expect(!batch.isEmpty)
            batch.merge(FileChangeBatch(paths: ["b"], overflowed: true, eventCount: 1))
            #expect(batch == FileChangeBatch(paths: ["a", "b"], overflowed: true, eventCount: 3))
            #expect(batch.description == "[a, b] (overflowed) from 3 event(s)")
            #expect(FileChangeBatch().isEmpty)
        }

        @Test func theMailboxDeliversReadyFirstAndMergesWhatWaits() async throws {
            let mailbox = BatchMailbox()
            mailbox.deliver(FileChangeBatch(paths: ["a"], eventCount: 1))
            mailbox.markReady()
            mailbox.deliver(FileChangeBatch(paths: ["b"], eventCount: 1))
            #expect(try await mailbox.next() == .ready)
            #expect(try await mailbox.next() == .batch(FileChangeBatch(paths: ["a", "b"], eventCount: 2)))
            mailbox.finish()
            #expect(try await mailbox.next() == nil)
        }

        @Test func theMailboxWakesAWaitingConsumer() async throws {
            let mailbox = BatchMailbox()
            let consumer = Task { try await mailbox.next() }
            try await Task.sleep(for: .milliseconds(20))
            mailbox.deliver(FileChangeBatch(paths: ["a"], eventCount: 1))
            #expect(try await consumer.value == .batch(FileChangeBatch(paths: ["a"], eventCount: 1)))
            let failing = Task { try await mailbox.next() }
            mailbox.finish(throwing: TestFailure(description: "boom"))
            await #expect(throws: TestFailure.self) { try await failing.value }
        }

        @Test func theSettleIsNeverNegativeOrLongerThanTheDebounce() {
            let configuration = WatchConfiguration(files: [], directories: [], debounce: .milliseconds(50))
            #expect(configuration.settle == .milliseconds(2))
            #expect(configuration.maximumDelay == .milliseconds(500))
            let long = WatchConfiguration(
                files: [], directories: [], debounce: .milliseconds(50), settle: .seconds(1))
            #expect(long.settle == .milliseconds(50))
            let negative = WatchConfiguration(
                files: [], directories: [], debounce: .milliseconds(50), settle: .milliseconds(-1))
            #expect(negative.settle == .zero)
        }

        @Test func relativePathsAreMadeAbsolute() {
            #expect(WatchedPath("/etc/a", workingDirectory: "/x").absolute == "/etc/a")
            #expect(WatchedPath("a/b", workingDirectory: "/x").absolute == "/x/a/b")
            #expect(WatchedPath("a", workingDirectory: "/").absolute == "/a")
            #expect(WatchedPath("a", workingDirectory: "/").configured == "a")
        }
    }
}
