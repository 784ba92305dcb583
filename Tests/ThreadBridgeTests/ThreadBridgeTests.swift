import Foundation
import Testing
import ThreadBridge

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether `pipe`'s read end is readable now.
private func isReadable(_ pipe: WakeupPipe, waitingMilliseconds: Int32 = 0) -> Bool {
    var entry = pollfd(fd: pipe.readDescriptor, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, waitingMilliseconds) == 1
}

private struct Refused: Error, Equatable {}

@Suite("threads and tasks")
struct ThreadBridgeTests {
    /// The calling thread's identity.
    static func threadID() -> Int {
        Int(bitPattern: pthread_self())
    }

    @Test("a wake-up pipe is readable from the first signal until drained, however many signals")
    func wakeupPipe() throws {
        let pipe = try WakeupPipe()
        #expect(!isReadable(pipe))
        pipe.signal()
        #expect(isReadable(pipe))
        #expect(isReadable(pipe), "still readable: a signal before the wait is not lost")
        pipe.drain()
        #expect(!isReadable(pipe))
        // More signals than the pipe holds: none blocks, and one drain empties it.
        for _ in 0..<200_000 { pipe.signal() }
        #expect(isReadable(pipe))
        pipe.drain()
        #expect(!isReadable(pipe))
    }

    @Test("run: the body runs on a thread of its own, and its result comes back")
    func runReturnsTheResult() async {
        let caller = Self.threadID()
        let (thread, sum) = await DedicatedThread.run(named: "bridge-test", onCancel: {}) {
            (Self.threadID(), (1...1000).reduce(0, +))
        }
        #expect(thread != caller, "not the calling task's thread")
        #expect(sum == 500_500)
    }

    @Test("a thread carries its name, cut to the kernel's 15 bytes at a character")
    func threadsAreNamed() async throws {
        let comm = "/proc/thread-self/comm"
        let read: @Sendable () -> String? = {
            (try? String(contentsOfFile: comm, encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }
        let short = await DedicatedThread.run(named: "bridge-test", onCancel: {}, read)
        #expect(short == "bridge-test")
        // 14 bytes, then a 2-byte character that does not fit whole.
        let long = DedicatedThread.start(named: "fourteen-bytes" + "é-and-more", read).join()
        #expect(long == "fourteen-bytes")
    }

    @Test("run: cancelling the task calls onCancel, and the thread is still awaited to its end")
    func runCancels() async throws {
        let pipe = try WakeupPipe()
        let started = try WakeupPipe()
        let task = Task {
            await DedicatedThread.run(named: "bridge-cancel", onCancel: { pipe.signal() }) { () -> String in
                started.signal()
                // Blocks until woken: only onCancel wakes it.
                var entry = pollfd(fd: pipe.readDescriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, 60_000)
                return ready == 1 ? "woken" : "timed out"
            }
        }
        // Waited for on a thread of its own: a poll(2) here would hold one of the cooperative
        // pool's threads (two on a 2-core machine), and with another test blocking the other,
        // the task above could not start its thread at all (a 60 s timeout under load).
        let didStart = await DedicatedThread.run(named: "bridge-cancel-wait", onCancel: {}) {
            isReadable(started, waitingMilliseconds: 60_000)
        }
        #expect(didStart)
        task.cancel()
        #expect(await task.value == "woken")
    }

    @Test("run: many threads at once, each result to its own caller")
    func manyRuns() async {
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<64 {
                group.addTask {
                    await DedicatedThread.run(named: "bridge-\(index)", onCancel: {}) {
                        usleep(UInt32(index % 7) * 1000)
                        return (index, index * index)
                    }
                }
            }
            var all: [Int: Int] = [:]
            for await (index, square) in group { all[index] = square }
            return all
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0.value == $0.key * $0.key })
    }

    @Test(
        "start and join: synchronous code does something else while the thread runs, then joins its result",
        .timeLimit(.minutes(1)))
    func startAndJoin() async throws {
        let started = try WakeupPipe()
        let go = try WakeupPipe()
        let joined = await DedicatedThread.run(named: "bridge-caller", onCancel: {}) {
            () -> (caller: Int, sawStart: Bool, thread: Int, sawCaller: Bool) in
            let caller = Self.threadID()
            // The thread tells that it runs, then waits for the caller's word: it can only get
            // that word while the caller is between start() and join(), so a start() that ran
            // the body itself, or a join() that did, would time out instead (60 s, a failure).
            let slow = DedicatedThread.start(named: "bridge-slow") { () -> (Int, Bool) in
                started.signal()
                return (Self.threadID(), isReadable(go, waitingMilliseconds: 60_000))
            }
            // Meanwhile: the caller sees the thread running before it joins, and lets it end.
            let sawStart = isReadable(started, waitingMilliseconds: 60_000)
            go.signal()
            let (thread, sawCaller) = slow.join()
            return (caller, sawStart, thread, sawCaller)
        }
        #expect(joined.sawStart, "the thread did not run while the caller waited before join()")
        #expect(joined.sawCaller, "the thread did not hear from the caller before join(): no overlap")
        #expect(joined.thread != joined.caller, "the body ran on the caller's thread")
    }

    @Test("TaskWaiter: synchronous code waits for async work, its value or its error")
    func taskWaiter() async {
        // From a thread of its own, as the rule says (never the cooperative pool).
        let outcome = await DedicatedThread.run(named: "bridge-sync", onCancel: {}) { () -> (Int?, Bool) in
            let value = try? TaskWaiter.wait { () async throws -> Int in
                try await Task.sleep(for: .milliseconds(10))
                return 5
            }
            var refused = false
            do {
                _ = try TaskWaiter.wait { () async throws -> Int in throw Refused() }
            } catch {
                refused = error is Refused
            }
            return (value, refused)
        }
        #expect(outcome.0 == 5)
        #expect(outcome.1, "the task's own error is thrown")
    }
}
