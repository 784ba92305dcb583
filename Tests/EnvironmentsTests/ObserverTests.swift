import Environments
import Foundation
import Testing

/// `onChange` callbacks and the `changes()` stream.
@Suite struct ObserverTests {
    @Test func onChangeReceivesAppliedChangesWithTheirKeys() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": 1, "B": 1, "C": 1]])
            let environment = try Environment(options: directory.options())
            let received = Locked<[[String]]>([])
            let generations = Locked<[UInt64]>([])
            environment.onChange { change in
                received.withLock { $0.append(change.changedKeys) }
                generations.withLock { $0.append(change.current.generation) }
            }

            try directory.writeXML(["Debug": ["A": 2, "B": 1, "C": 1]])
            try environment.reload()
            try environment.reload()  // unchanged: nobody is notified
            try environment.setOverride(5, forKey: "C")
            try directory.write("Environments.plist", text: "broken")
            _ = try? environment.reload()  // failed: nobody is notified
            try directory.writeXML(["Debug": ["A": 2, "B": 3, "D": 4]])
            try environment.reload()

            #expect(received.value == [["A"], ["C"], ["B", "D"]])
            #expect(generations.value == [2, 3, 4])
        }
    }

    @Test func theCallbackSeesTheNewSnapshotInPlace() throws {
        let environment = try Environment(values: ["A": 1])
        let seen = Locked<[Int]>([])
        let token = environment.onChange { change in
            seen.withLock { $0.append(environment.int("A", default: 0)) }
            seen.withLock { $0.append(change.previous.int("A", default: 0)) }
        }
        try environment.setOverride(2, forKey: "A")
        #expect(seen.value == [2, 1])
        // The callback captures its environment: removing it lets both go.
        environment.removeObserver(token)
    }

    @Test func removedObserversAreNotCalled() throws {
        let environment = try Environment(values: ["A": 1])
        let first = Locked(0)
        let second = Locked(0)
        let token = environment.onChange { _ in first.withLock { $0 += 1 } }
        environment.onChange { _ in second.withLock { $0 += 1 } }
        try environment.setOverride(2, forKey: "A")
        environment.removeObserver(token)
        try environment.setOverride(3, forKey: "A")
        #expect(first.value == 1)
        #expect(second.value == 2)
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
            #expect(first.current.int("A", default: 0) == 2)
            let second = try #require(await iterator.next())
            #expect(second.changedKeys == ["B"])
            #expect(second.previous.generation == 2)
            #expect(second.current.generation == 3)
            #expect(second.current.string("B") == "x")
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
        #expect(environment.int("A", default: 0) == -1)
    }
}
