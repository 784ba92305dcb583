import Dispatch
import Locking

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blocking work on a thread of its own, never on Swift's cooperative pool, and its result
/// handed back: to async code (``run(named:onCancel:_:)``) or to synchronous code
/// (``start(named:_:)`` and ``Joinable/join()``).
///
/// The result always crosses through a ``Locked`` value, never through the continuation or a
/// semaphore alone: ThreadSanitizer sees the lock order every write the thread made before
/// the reader's reads.
package enum DedicatedThread {
    /// Runs `body` on a new thread named `name` and returns its result once it has returned.
    ///
    /// Cancelling the calling task calls `onCancel`, which must make `body` return soon (a
    /// ``WakeupPipe/signal()`` that its `poll(2)` waits on, a flag it checks); the thread is
    /// always awaited, so nothing it uses is freed while it runs.
    package static func run<Result: Sendable>(
        named name: String, onCancel: @escaping @Sendable () -> Void, _ body: @escaping @Sendable () -> Result
    ) async -> Result {
        let handoff = Handoff<Result>()
        spawn(named: name) { handoff.finish(body()) }
        return await withTaskCancellationHandler {
            await handoff.value()
        } onCancel: {
            onCancel()
        }
    }

    /// Starts `body` on a new thread named `name`, for synchronous code that does something
    /// else meanwhile (reads one pipe while the thread reads another) and then joins it.
    package static func start<Result: Sendable>(
        named name: String, _ body: @escaping @Sendable () -> Result
    ) -> Joinable<Result> {
        let joinable = Joinable<Result>()
        spawn(named: name) { joinable.finish(body()) }
        return joinable
    }

    /// Starts `body` on a new POSIX thread, detached, named `name` (its first 15 bytes, the
    /// kernel's limit), with the process's default stack size, as Foundation's `Thread` does.
    /// A thread that cannot be created (the process's or the system's thread limit) is a
    /// precondition failure, as it is for `Thread`.
    private static func spawn(named name: String, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, runThreadStart, start)
        precondition(status == 0, "cannot start the thread '\(name)': pthread_create failed (\(status))")
        pthread_detach(thread)
    }

    /// Names the calling thread (`ps -L`, `top -H`, a core dump): its first 15 bytes, the
    /// kernel's limit, cut at a character. On Linux through `/proc/thread-self/comm`, as
    /// `pthread_setname_np` does (which Glibc's Swift module leaves out).
    fileprivate static func nameCurrentThread(_ name: String) {
        var bytes: [UInt8] = []
        for scalar in name.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard bytes.count + encoded.count <= 15 else { break }
            bytes += encoded
        }
        #if canImport(Darwin)
            _ = pthread_setname_np(String(decoding: bytes, as: UTF8.self))
        #else
            let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return }
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        #endif
    }

    /// A thread's result, awaited once by one task.
    private final class Handoff<Result: Sendable>: Sendable {
        private enum State {
            case running
            case waiting(CheckedContinuation<Void, Never>)
            case finished(Result)
        }

        private let state = Locked<State>(.running)

        /// Called on the thread: stores the result and resumes the waiter, if one waits.
        func finish(_ result: Result) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state = .finished(result) }
                if case .waiting(let waiter) = state { return waiter }
                return nil
            }
            waiter?.resume()
        }

        /// The result, once the thread stored it.
        func value() async -> Result {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let finished = state.withLock { state -> Bool in
                    if case .finished = state { return true }
                    state = .waiting(continuation)
                    return false
                }
                if finished { continuation.resume() }
            }
            return state.withLock { state in
                guard case .finished(let result) = state else { preconditionFailure("resumed before the result") }
                return result
            }
        }
    }
}

/// A new thread's entry point: names the thread and runs the ``ThreadStart`` it is given.
private func runThreadStart(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
    DedicatedThread.nameCurrentThread(start.name)
    start.body()
    return nil
}

/// What a new thread runs, handed to it through `pthread_create`'s argument.
private final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

/// A thread started by ``DedicatedThread/start(named:_:)``: ``join()`` waits for its result.
package final class Joinable<Result: Sendable>: Sendable {
    private let result = Locked<(finished: Bool, value: Result?)>((false, nil))
    private let done = DispatchSemaphore(value: 0)

    init() {}

    func finish(_ value: Result) {
        result.withLock { $0 = (true, value) }
        done.signal()
    }

    /// Blocks the calling thread until the thread returned, then gives its result. Call it
    /// once, never on Swift's cooperative pool.
    package func join() -> Result {
        done.wait()
        return result.withLock { $0.value! }
    }
}
