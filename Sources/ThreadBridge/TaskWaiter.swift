import Dispatch
import Locking

/// Async work run from synchronous code that must wait for it: a command-line tool's
/// synchronous command that talks to etcd, a framework callback that cannot be `async`
/// (Vapor's `willBoot`).
package enum TaskWaiter {
    /// Runs `body` in a new task and blocks the calling thread until it ends, then returns its
    /// result or throws its error.
    ///
    /// The calling thread must not be one of Swift's cooperative pool (the task may need it):
    /// a program's main thread, a thread of ``DedicatedThread``, a framework's own thread.
    package static func wait<Result: Sendable>(
        for body: @escaping @Sendable () async throws -> Result
    ) throws -> Result {
        let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await body()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
