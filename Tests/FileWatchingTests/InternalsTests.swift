import Testing

@testable import FileWatching

extension FileWatchingTests {
    /// The pure pieces: coalescing deadlines, batch merging and the mailbox.
    @Suite struct InternalsTests {
        @Test func aBurstEndsAfterTheDebounceOrTheMaximumDelay() {
            var accumulator = BatchAccumulator(
                debounce: .milliseconds(50), maximumDelay: .milliseconds(500))
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

        @Test func relativePathsAreMadeAbsolute() {
            #expect(WatchedPath("/etc/a", workingDirectory: "/x").absolute == "/etc/a")
            #expect(WatchedPath("a/b", workingDirectory: "/x").absolute == "/x/a/b")
            #expect(WatchedPath("a", workingDirectory: "/").absolute == "/a")
            #expect(WatchedPath("a", workingDirectory: "/").configured == "a")
        }
    }
}
