import Dispatch
import Foundation
package import Testing

/// Runs a suite's tests off Swift's cooperative thread pool, on threads that may block.
///
/// Swift Testing runs every test, synchronous ones included, on the cooperative pool: two
/// threads on this project's two-core machines, shared by about a hundred suites at once and by
/// the daemons that tests start in this process. A test that waits there for a child process,
/// a socket, a datagram or an etcd member holds one of the two threads for as long as it waits,
/// and every in-process daemon beside it stops answering (in CI: "no answer from the control
/// socket within 30 seconds", a file watcher that "did not become ready", an idle connection
/// never closed — all at the same moment, all freed when one test's `envctl` ended). Sampling
/// the test process with gdb found such waits in dozens of suites.
///
/// With this trait, a suite's tests and the tasks they start run on ``BlockingTestExecutor``,
/// where a wait blocks only the thread it is on. Every suite that runs processes, daemons,
/// sockets or clusters carries it, and so does every suite whose tests compute for seconds
/// (large documents, chains of a hundred thousand references): `@Suite("…", .blocking)`.
///
/// Tasks that a test starts with `Task { }` (an in-process daemon's service, typically) do not
/// inherit the trait: they run on the cooperative pool, which the trait keeps free for them.
package struct BlockingTrait: TestTrait, SuiteTrait, TestScoping {
    /// On a suite, the trait applies to its nested suites and all their tests too, and provides
    /// its scope around each test case (each argument of a parameterized test), never once
    /// around the whole suite.
    package var isRecursive: Bool { true }

    /// Runs one test case with ``BlockingTestExecutor`` as its task executor preference, so that
    /// its body and the child tasks it starts in structured concurrency run there.
    ///
    /// - Parameters:
    ///   - test: The test function being run.
    ///   - testCase: The test case: one of a parameterized test's arguments, or a test's only case.
    ///   - function: The test case's body, run on the executor.
    /// - Throws: What `function` throws.
    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(BlockingTestExecutor.shared) { try await function() }
    }
}

extension Trait where Self == BlockingTrait {
    /// The suite's tests may block: they run on ``BlockingTestExecutor``, off the cooperative pool.
    package static var blocking: Self { Self() }
}

/// A task executor whose jobs each run on a serial dispatch queue of their own.
///
/// Serial queues draw on libdispatch's overcommitting thread pool, which starts another thread
/// when every one it has is busy or blocked (up to 255 at once), and lets idle ones exit. So a
/// job that blocks delays no other job.
package final class BlockingTestExecutor: TaskExecutor {
    /// The executor every ``BlockingTrait`` scope prefers; it holds no state, so one is enough.
    package static let shared = BlockingTestExecutor()

    /// Runs `job` on a new serial queue of its own, on this executor: it never waits behind
    /// another job, however long that one blocks.
    ///
    /// - Parameter job: The job the runtime hands over; it runs once, asynchronously.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: "blocking-test").async { job.runSynchronously(on: executor) }
    }
}

/// Runs blocking work (child processes, sockets) on a thread of its own, with a stack of 8 MiB,
/// and waits for it without blocking: for blocking work in a suite without ``BlockingTrait``
/// (a shared helper such as ``ControlSocketFixture/call(_:_:_:)``), so that it never occupies
/// one of the few threads that run the daemons' tasks in this process.
package func onThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws
    -> Value
{
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
