import Dispatch
import Environments
import Foundation
import Locking
import Testing

/// `onChange` callbacks and the `changes()` stream.
@Suite struct ObserverTests {
    @Test func onChangeReceivesAppliedChangesWithTheirKeys() throws {
        try withEnvironment(loading: ["Debug": ["A": 1, "B": 1, "C": 1]]) { environment, directory in
            let received = Received()
            let observation = environment.onChange(received.record)
            defer { observation.cancel() }

            try directory.writeXML(["Debug": ["A": 2, "B": 1, "C": 1]])
            try environment.reload()
            try environment.reload()  // unchanged: nobody is notified
            try environment.setOverride(5, forKey: "C")
            try directory.write("Environments.plist", text: "broken")
            _ = try? environment.reload()  // failed: nobody is notified
            try directory.writeXML(["Debug": ["A": 2, "B": 3, "D": 4]])
            try environment.reload()

            received.wait(for: 3)
            #expect(received.keys == [["A"], ["C"], ["B", "D"]])
            #expect(received.changes.value.map(\.current.generation) == [2, 3, 4])
        }
    }

    @Test func theCallbackSeesTheNewSnapshotInPlace() throws {
        let environment = try Environment(values: ["A": 1])
        let seen = Locked<[Int]>([])
        let received = Received()
        let observation = environment.onChange { change in
            seen.withLock { $0.append(environment.get("A", default: 0)) }
            seen.withLock { $0.append(change.previous.get("A", default: 0)) }
            received.record(change)
        }
        try environment.setOverride(2, forKey: "A")
        received.wait(for: 1)
        #expect(seen.value == [2, 1])
        // The callback captures its environment: ending the observation lets both go.
        observation.cancel()
    }

    @Test func cancelledObserversAreNotCalled() throws {
        let environment = try Environment(values: ["A": 1])
        let first = Received()
        let second = Received()
        let firstObservation = environment.onChange(first.record)
        let secondObservation = environment.onChange(second.record)
        defer { secondObservation.cancel() }
        try environment.setOverride(2, forKey: "A")
        first.wait(for: 1)
        firstObservation.cancel()
        firstObservation.cancel()  // a second time does nothing
        try environment.setOverride(3, forKey: "A")
        second.wait(for: 2)
        #expect(first.changes.value.count == 1)
        #expect(second.changes.value.count == 2)
    }

    /// The token is the observation: a reload after it is released calls nobody, one while it
    /// is kept calls the callback.
    @Test func droppingTheTokenEndsTheObservation() throws {
        try withEnvironment(loading: ["Debug": ["A": 1]]) { environment, directory in
            let received = Received()
            var observation: ObserverToken? = environment.onChange(received.record)
            try directory.writeXML(["Debug": ["A": 2]])
            try environment.reload()
            received.wait(for: 1)

            observation = nil
            #expect(observation == nil)
            try directory.writeXML(["Debug": ["A": 3]])
            try environment.reload()
            // Observers run one after another: once a later one has seen the next change, the
            // released one would have been called for this one already.
            try environment.setOverrideAndWaitForObservers(4, forKey: "A")
            #expect(received.changes.value.map(\.current.generation) == [2])
        }
    }

    @Test func keepingTheTokenKeepsTheObservation() throws {
        try withEnvironment(loading: ["Debug": ["A": 0]]) { environment, directory in
            let received = Received()
            let observation = environment.onChange(received.record)
            for value in 1...3 {
                try directory.writeXML(["Debug": ["A": value]])
                try environment.reload()
            }
            received.wait(for: 3)
            #expect(received.changes.value.map(\.current.generation) == [2, 3, 4])
            withExtendedLifetime(observation) {}
        }
    }

    /// A result that is discarded (the compiler warns) ends the observation at once.
    @Test func aDiscardedTokenObservesNothing() throws {
        let environment = try Environment(values: ["A": 0])
        let discarded = Received()
        _ = environment.onChange(discarded.record)
        try environment.setOverrideAndWaitForObservers(1, forKey: "A")
        #expect(discarded.changes.value.isEmpty)
    }

    /// A token released by another thread while its callback runs does not wait for the
    /// callback (it may be released holding a lock the callback takes), and the callback is
    /// not called again.
    @Test func releasingTheTokenDoesNotWaitForARunningCallback() throws {
        let environment = try Environment(values: ["A": 0])
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let received = Received()
        var observation: ObserverToken? = environment.onChange { change in
            entered.signal()
            release.wait()
            received.record(change)
        }
        #expect(observation != nil)
        try environment.setOverride(1, forKey: "A")
        entered.wait()
        observation = nil  // returns while the callback is blocked
        release.signal()
        received.wait(for: 1)
        try environment.setOverride(2, forKey: "A")
        try environment.setOverrideAndWaitForObservers(3, forKey: "A")
        #expect(received.changes.value.map(\.current.generation) == [2])
    }

    @Test func anObserverRegisteredAfterAChangeDoesNotReceiveIt() throws {
        let environment = try Environment(values: ["A": 1])
        try environment.setOverride(2, forKey: "A")
        let received = Received()
        let observation = environment.onChange(received.record)
        defer { observation.cancel() }
        try environment.setOverride(3, forKey: "A")
        received.wait(for: 1)
        #expect(received.changes.value.map(\.current.generation) == [3])
    }

    /// Callbacks run on the environment's queue: a reload returns while a callback is still
    /// blocked, and the callback never runs on the thread that reloaded.
    @Test func callbacksRunOnTheirOwnQueueNotOnTheReloadingThread() throws {
        let environment = try Environment(values: ["A": 0])
        let release = DispatchSemaphore(value: 0)
        let received = Received()
        let reloadingThread = pthread_self()
        let onReloadingThread = Locked<[Bool]>([])
        let observation = environment.onChange { change in
            onReloadingThread.withLock { $0.append(pthread_equal(pthread_self(), reloadingThread) != 0) }
            release.wait()
            received.record(change)
        }
        // Two changes while the first callback is blocked: neither waits for it.
        try environment.setOverride(1, forKey: "A")
        try environment.setOverride(2, forKey: "A")
        #expect(environment.get("A", default: 0) == 2)
        #expect(received.changes.value.isEmpty)
        release.signal()
        release.signal()
        received.wait(for: 2)
        #expect(received.changes.value.map(\.current.generation) == [2, 3])
        #expect(onReloadingThread.value == [false, false])
        observation.cancel()
    }

    /// Changes from many threads at once: every one applies (none is lost to a retry), and the
    /// observer sees them one at a time, generations increasing by one.
    @Test func concurrentChangesAllApplyAndArriveInOrder() throws {
        let environment = try Environment(values: [:])
        let received = Received()
        let observation = environment.onChange(received.record)
        defer { observation.cancel() }
        let threads = 4
        let perThread = 50
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                _ = try? environment.setOverride(.integer(index), forKey: "T\(thread)")
            }
        }
        received.wait(for: threads * perThread)
        let generations = received.changes.value.map(\.current.generation)
        #expect(generations == Array(2...UInt64(1 + threads * perThread)))
        for thread in 0..<threads { #expect(environment.get("T\(thread)", default: -1) == perThread - 1) }
    }

    @Test func cancellingFromItsOwnCallbackDoesNotWaitForItself() throws {
        let environment = try Environment(values: ["A": 0])
        let received = Received()
        let observation = Locked<ObserverToken?>(nil)
        observation.withLock {
            $0 = environment.onChange { change in
                observation.value?.cancel()
                received.record(change)
            }
        }
        try environment.setOverride(1, forKey: "A")
        received.wait(for: 1)
        try environment.setOverride(2, forKey: "A")
        try environment.setOverrideAndWaitForObservers(3, forKey: "A")
        #expect(received.changes.value.count == 1)
    }

    @Test func changesStreamDeliversAppliedChanges() async throws {
        try await withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": 1, "B": 1]])
            let environment = try Environment(options: directory.options())
            let stream = environment.changes()

            try directory.writeXML(["Debug": ["A": 2, "B": 1]])
            try environment.reload()
            try environment.reload()  // unchanged
            try environment.setOverride("x", forKey: "B")

            var iterator = stream.makeAsyncIterator()
            let first = try #require(await iterator.next())
            #expect(first.changedKeys == ["A"])
            #expect(first.current.generation == 2)
            #expect(first.current.get("A", default: 0) == 2)
            let second = try #require(await iterator.next())
            #expect(second.changedKeys == ["B"])
            #expect(second.previous.generation == 2)
            #expect(second.current.generation == 3)
            #expect((try? second.current.require("B", as: String.self)) == "x")
        }
    }

    @Test func changesStreamConsumedByATask() async throws {
        let environment = try Environment(values: ["Counter": 0])
        let stream = environment.changes()
        let consumer = Task { () -> [[String]] in
            var keys: [[String]] = []
            for await change in stream {
                keys.append(change.changedKeys)
                if keys.count == 3 { break }
            }
            return keys
        }
        try environment.setOverride(1, forKey: "Counter")
        try environment.setOverride("x", forKey: "Other")
        try environment.setOverride(2, forKey: "Counter")
        #expect(await consumer.value == [["Counter"], ["Other"], ["Counter"]])
    }

    @Test func cancellingTheConsumerRemovesTheObserver() async throws {
        let environment = try Environment(values: ["A": 0])
        let started = Locked(false)
        let consumer = Task {
            for await _ in environment.changes() { started.withLock { $0 = true } }
        }
        // Wait until the consumer has received one change, so it is registered.
        var value = 0
        while !started.value {
            value += 1
            try environment.setOverride(.integer(value), forKey: "A")
            await Task.yield()
        }
        consumer.cancel()
        await consumer.value
        // Changes after cancellation still apply; nothing is left waiting.
        try environment.setOverride(-1, forKey: "A")
        #expect(environment.get("A", default: 0) == -1)
    }
}
