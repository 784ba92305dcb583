import Dispatch
import Foundation
import Synchronization

/// A thread of its own that runs jobs one at a time, in the order they were queued: an
/// environment's observers run here, and the fleet's cache writes.
///
/// Not a `DispatchQueue`: libdispatch's worker threads set their scheduling priority with
/// `setpriority(2)`, which a hardened unit's `SystemCallFilter=~@resources` refuses, and each
/// refusal writes "Failed to set thread priority for worker thread" to the journal. This
/// thread sets nothing: it starts with the first job, and then waits for work.
package final class SerialThread: @unchecked Sendable {
    private let name: String
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [@Sendable () -> Void] = []
    /// Guarded by `condition`.
    private var isStarted = false
    /// The running thread's identity (`pthread_self`), 0 before it starts.
    private let threadID = Atomic<UInt>(0)

    /// A thread named `name` (as `ps -L` and debuggers show it), started by the first job.
    package init(name: String) {
        self.name = name
    }

    /// Whether the caller runs on this thread (inside one of its jobs).
    package var isCurrent: Bool {
        threadID.load(ordering: .acquiring) == SerialThread.currentThreadID()
    }

    /// Queues `job` after every job queued before it.
    package func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        if !isStarted {
            isStarted = true
            let thread = Thread { [self] in run() }
            thread.name = name
            thread.start()
        }
        condition.signal()
        condition.unlock()
    }

    /// Runs `job` after every job queued before it, and returns when it has run; from a job of
    /// this thread, runs it at once (waiting would never end).
    package func sync(_ job: @escaping @Sendable () -> Void) {
        if isCurrent { return job() }
        let done = DispatchSemaphore(value: 0)
        async {
            job()
            done.signal()
        }
        done.wait()
    }

    private func run() {
        threadID.store(SerialThread.currentThreadID(), ordering: .releasing)
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job() }
        }
    }

    /// Names the calling thread, for as long as it runs; never 0.
    package static func currentThreadID() -> UInt {
        #if canImport(Darwin)
            UInt(bitPattern: pthread_self())
        #else
            UInt(pthread_self())
        #endif
    }
}
