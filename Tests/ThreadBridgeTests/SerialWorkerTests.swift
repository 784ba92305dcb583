import Dispatch
import Locking
import Testing
import ThreadBridge

/// Waits for `semaphore` on a thread of its own, so that the test's task never blocks a thread
/// of the cooperative pool.
private func waitFor(_ semaphore: DispatchSemaphore) async {
    await DedicatedThread.run(named: "worker-test-wait", onCancel: {}) { semaphore.wait() }
}

/// Waits until `worker` holds `count` jobs (submitted, and not yet finished or skipped).
/// Polls without a deadline: the test's own time limit ends a test that hangs.
private func waitUntil(_ worker: SerialWorker, holds count: Int) async {
    while worker.pendingJobs != count { await Task.yield() }
}

/// A job that blocks the worker until released: the events of a test happen while it runs.
private final class Blocker: Sendable {
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let finished = Locked(false)

    /// The job: says it started, waits to be released, records that it finished.
    func job(returning value: Int) -> @Sendable () -> Int {
        { [self] in
            started.signal()
            release.wait()
            finished.withLock { $0 = true }
            return value
        }
    }

    /// Submits ``job(returning:)`` to `worker` (with `runAbandonable` if `abandonable`) and
    /// returns once it runs: the worker is busy until ``release`` is signalled.
    func occupy(_ worker: SerialWorker, returning value: Int, abandonable: Bool = false) async -> Task<Int?, Never> {
        let job = job(returning: value)
        let task = Task { abandonable ? await worker.runAbandonable(job) : await worker.run(job) }
        await waitFor(started)
        return task
    }
}

@Suite("serial worker")
struct SerialWorkerTests {
    @Test("jobs run one at a time, in the order they were submitted, each result to its caller")
    func order() async {
        let worker = SerialWorker(label: "worker-test-order")
        let blocker = Blocker()
        let first = await blocker.occupy(worker, returning: 0)
        // Each job is submitted (counted) before the next: their order is known.
        let ran = Locked<[Int]>([])
        let running = Locked(0)
        var submitters: [Task<Int?, Never>] = []
        for index in 1...40 {
            let job: @Sendable () -> Int = {
                let overlapping = running.withLock { running in
                    running += 1
                    return running > 1
                }
                ran.withLock { $0.append(index) }
                running.withLock { $0 -= 1 }
                return overlapping ? -1 : index * index
            }
            if index.isMultiple(of: 2) {
                submitters.append(Task { await worker.runAbandonable(job) })
            } else {
                submitters.append(Task { await worker.run(job) })
            }
            await waitUntil(worker, holds: index + 1)
        }
        blocker.release.signal()
        #expect(await first.value == 0)
        for (offset, submitter) in submitters.enumerated() {
            let index = offset + 1
            #expect(await submitter.value == index * index, "job \(index)'s own result, and no job beside it")
        }
        #expect(ran.withLock { $0 } == Array(1...40))
        #expect(worker.pendingJobs == 0)
    }

    @Test("run: the job runs on the worker's queue, not on the caller's thread")
    func runsOnTheQueue() async {
        let worker = SerialWorker(label: "worker-test-thread")
        let caller = ThreadBridgeTests.threadID()
        let job = await worker.run { ThreadBridgeTests.threadID() }
        #expect(job != caller)
    }

    @Test("abandon while a job runs: its waiter gets nil at once, the job goes on and its result is dropped")
    func abandonWhileRunning() async {
        let worker = SerialWorker(label: "worker-test-abandon")
        let blocker = Blocker()
        let running = await blocker.occupy(worker, returning: 42, abandonable: true)
        // Waiting for its turn behind the running job.
        let queuedRan = Locked(false)
        let queued = Task {
            await worker.runAbandonable { () -> Int in
                queuedRan.withLock { $0 = true }
                return 7
            }
        }
        await waitUntil(worker, holds: 2)

        worker.abandon()
        #expect(worker.isAbandoned)
        // The job is still blocked: only abandon() can have resumed its waiter.
        #expect(await running.value == nil)
        #expect(await queued.value == nil)
        #expect(!blocker.finished.withLock { $0 })

        // A job that cannot be abandoned, behind the running one: it runs once that one ended.
        let after = Task { await worker.run { blocker.finished.withLock { $0 } } }
        blocker.release.signal()
        #expect(await after.value, "the abandoned job went on to its end")
        #expect(!queuedRan.withLock { $0 }, "a job abandoned before its turn never runs")
        #expect(worker.pendingJobs == 0)
    }

    @Test("after abandon, an abandonable job returns nil at once and never runs")
    func submitAfterAbandon() async {
        let worker = SerialWorker(label: "worker-test-after")
        let blocker = Blocker()
        let running = await blocker.occupy(worker, returning: 1)
        worker.abandon()
        worker.abandon()
        // The queue is still blocked: a nil now cannot have waited for a turn.
        let ran = Locked(false)
        let late = await worker.runAbandonable { () -> Int in
            ran.withLock { $0 = true }
            return 2
        }
        #expect(late == nil)
        blocker.release.signal()
        #expect(await running.value == 1, "a job that cannot be abandoned still completes")
        #expect(await worker.run { 3 } == 3)
        #expect(!ran.withLock { $0 })
    }

    @Test("unlessAbandoned runs its body until abandon, and abandon waits for a body that runs")
    func unlessAbandoned() async {
        let worker = SerialWorker(label: "worker-test-gate")
        #expect(worker.unlessAbandoned { 5 } == 5)

        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let published = Locked(false)
        let job = Task {
            await worker.runAbandonable { () -> Bool? in
                worker.unlessAbandoned { () -> Bool in
                    entered.signal()
                    release.wait()
                    published.withLock { $0 = true }
                    return true
                }
            }
        }
        await waitFor(entered)
        // abandon() on a thread of its own: it returns only after the body ended.
        let abandoner = DedicatedThread.start(named: "worker-test-abandoner") { () -> Bool in
            worker.abandon()
            return published.withLock { $0 }
        }
        release.signal()
        let publishedBeforeAbandonReturned = await DedicatedThread.run(named: "worker-test-join", onCancel: {}) {
            abandoner.join()
        }
        #expect(publishedBeforeAbandonReturned)
        _ = await job.value  // its value or nil: abandon() raced with its end
        #expect(worker.unlessAbandoned { 5 } == nil)
    }

    @Test("many concurrent submitters, some abandonable, abandoned half way: every caller gets its own answer")
    func manySubmitters() async {
        let worker = SerialWorker(label: "worker-test-many")
        let running = Locked(0)
        let overlaps = Locked(0)
        let completed = Locked(0)
        let outcomes = await withTaskGroup(of: (Int, Bool, Int?).self) { group in
            for submitter in 0..<64 {
                group.addTask {
                    var last: (Int, Bool, Int?) = (submitter, false, nil)
                    for round in 0..<10 {
                        let value = submitter * 100 + round
                        let job: @Sendable () -> Int = {
                            let overlapping = running.withLock { running in
                                running += 1
                                return running > 1
                            }
                            if overlapping { overlaps.withLock { $0 += 1 } }
                            running.withLock { $0 -= 1 }
                            completed.withLock { $0 += 1 }
                            return value
                        }
                        let abandonable = (submitter + round).isMultiple(of: 2)
                        let result: Int?
                        if abandonable {
                            result = await worker.runAbandonable(job)
                        } else {
                            result = await worker.run(job)
                        }
                        // A result, when there is one, is the job's own.
                        if let result, result != value { return (submitter, abandonable, -1) }
                        if !abandonable, result == nil { return (submitter, abandonable, -2) }
                        last = (submitter, abandonable, result)
                    }
                    return last
                }
            }
            group.addTask {
                await waitUntil(worker, atLeastCompleted: 200, completed)
                worker.abandon()
                return (-1, false, 0)
            }
            var all: [(Int, Bool, Int?)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 65)
        #expect(outcomes.allSatisfy { $0.2 != -1 }, "every result went to its own caller")
        #expect(outcomes.allSatisfy { $0.2 != -2 }, "a job that cannot be abandoned always answers")
        #expect(overlaps.withLock { $0 } == 0, "never two jobs at once")
        #expect(worker.isAbandoned)
        #expect(await worker.runAbandonable { 1 } == nil)
        // Every job still queued has had its turn once a job submitted now has had its own.
        #expect(await worker.run { 2 } == 2)
        #expect(worker.pendingJobs == 0)
    }
}

/// Waits until `completed` reaches `count`: half way through a busy worker's jobs.
private func waitUntil(_ worker: SerialWorker, atLeastCompleted count: Int, _ completed: Locked<Int>) async {
    while completed.withLock({ $0 }) < count { await Task.yield() }
}
