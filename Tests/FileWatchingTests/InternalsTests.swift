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

        /// One event of a burst, and the deadline the burst has after it.
        struct Event: Sendable {
            let path: String
            /// Whether the event completes a save.
            let completion: Bool
            /// When the event comes, in milliseconds after the start of the burst.
            let at: Int
            /// The deadline after the event, in milliseconds after the start of the burst.
            let due: Int

            /// An event that completes a save: the burst is due after the 2 ms settle.
            static func completion(_ path: String, at: Int, due: Int) -> Event {
                Event(path: path, completion: true, at: at, due: due)
            }

            /// An event of a save that may still be in progress: the burst is due after the
            /// 50 ms debounce.
            static func inProgress(_ path: String, at: Int, due: Int) -> Event {
                Event(path: path, completion: false, at: at, due: due)
            }
        }

        /// A burst of events, named for what it shows.
        struct Burst: Sendable, CustomTestStringConvertible {
            let testDescription: String
            let events: [Event]

            init(_ description: String, _ events: Event...) {
                testDescription = description
                self.events = events
            }

            /// Bursts of one kind of event.
            static let ofOneKind = [
                Burst(
                    "completion events wait for the settle", .completion("a", at: 0, due: 2),
                    .completion("b", at: 1, due: 3)),
                Burst(
                    "in-progress events wait for the debounce", .inProgress("a", at: 0, due: 50),
                    .inProgress("a", at: 10, due: 60)),
            ]

            /// Bursts of both kinds: the last event decides.
            static let mixed = [
                Burst(
                    "an in-progress event after a completion falls back to the debounce",
                    .completion("a", at: 0, due: 2), .inProgress("a", at: 1, due: 51)),
                Burst(
                    "a completion after in-progress events switches to the settle (a write in place)",
                    .inProgress("a", at: 0, due: 50), .inProgress("a", at: 1, due: 51), .completion("a", at: 2, due: 4)),
                Burst(
                    "an in-progress event seen at the same instant as a completion, as from one read",
                    .completion("a", at: 0, due: 2), .inProgress("a", at: 0, due: 50)),
                Burst(
                    "the last event decides, however the burst went before it",
                    .inProgress("a", at: 0, due: 50), .inProgress("a", at: 1, due: 51), .completion("a", at: 2, due: 4),
                    .inProgress("a", at: 5, due: 55), .completion("b", at: 6, due: 8)),
                Burst(
                    "a rename over the file: moved-from and moved-to from one read",
                    .inProgress("a", at: 0, due: 50), .completion("a", at: 0, due: 2)),
            ]
        }

        @Test(arguments: Burst.ofOneKind + Burst.mixed)
        func aBurstIsDueAfterTheQuietTimeOfItsLastEvent(_ burst: Burst) throws {
            var accumulator = makeAccumulator()
            let start = ContinuousClock.now
            for event in burst.events {
                accumulator.add(paths: [event.path], completion: event.completion, at: start + .milliseconds(event.at))
                #expect(accumulator.deadline == start + .milliseconds(event.due), "after the event at \(event.at) ms")
            }
            let due = start + .milliseconds(try #require(burst.events.last).due)
            #expect(accumulator.takeIfDue(at: due - .milliseconds(1)) == nil)
            let batch = accumulator.takeIfDue(at: due)
            #expect(batch == FileChangeBatch(paths: Set(burst.events.map(\.path)), eventCount: burst.events.count))
            #expect(!accumulator.isCollecting)
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
