import Foundation
import Locking
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `Locked`, the project's one lock: mutual exclusion between real threads, errors through
/// `withLock`, and locks made with `survivesFork` that a `fork()` never leaves held.
@Suite("Locked")
struct LockedTests {
    @Test("threads that update one value through withLock lose no update")
    func mutualExclusion() {
        let counter = Locked(0)
        let threads = 8
        let increments = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    @Test("an error thrown in withLock reaches the caller typed, and the lock is free again")
    func throwingBody() {
        struct Refused: Error, Equatable {}
        let value = Locked([1, 2])
        #expect(throws: Refused.self) {
            try value.withLock { (_: inout [Int]) throws(Refused) in throw Refused() }
        }
        #expect(value.withLock { $0.count } == 2)
    }

    @Test(
        "fork() while another thread holds a survivesFork lock: fork waits for it, and the child takes the lock",
        arguments: [true, false])
    func forkWhileHeld(survivesFork: Bool) throws {
        // Only the fork-safe lock is guaranteed free in the child; a plain one is left as the
        // holder left it. The plain case is run without a holder across the fork, as a control.
        let lock = Locked(0, survivesFork: survivesFork)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            lock.withLock { value in
                value += 1
                holding.signal()
                // Held for a while: a fork that does not wait would copy it held.
                _ = release.wait(timeout: .now() + .milliseconds(survivesFork ? 300 : 0))
            }
        }
        holder.start()
        holding.wait()
        if !survivesFork { usleep(50_000) }
        let child = fork()
        if child == 0 {
            // The child: take the lock, and report whether it could, through the exit status.
            lock.withLock { $0 += 1 }
            _exit(0)
        }
        release.signal()
        #expect(child > 0)
        var status: Int32 = 0
        // A child that deadlocks would never exit: wait at most 10 s, then kill it.
        var waited = 0
        while waitpid(child, &status, WNOHANG) == 0 {
            usleep(10_000)
            waited += 1
            if waited > 1_000 {
                kill(child, SIGKILL)
                waitpid(child, &status, 0)
                Issue.record("the child could not take the lock within 10 s")
                return
            }
        }
        #expect(status == 0)
        #expect(lock.withLock { $0 } == 1)
    }
}
