import Environments
import Foundation
import Locking
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The read path where a process or a thread ends its life unusually: a child made by `fork()`
/// while other threads read and publish, a read from a thread-specific value's destructor,
/// and a `validate` that tries to change the environment it judges.
@Suite(.blocking) struct ForkAndThreadExitTests {
    /// Whether this process runs under ThreadSanitizer (its runtime is linked in).
    static let underThreadSanitizer: Bool = {
        #if os(Linux)
            dlsym(nil, "__tsan_init") != nil
        #else
            false
        #endif
    }()

    // MARK: - fork()

    /// Forks from a thread that never read (so the child's first read registers a cache and
    /// fetches the snapshot: the registry's lock and the store's), while other threads publish
    /// (both locks, over and over) and read. Each child reads once and exits with 0 if the
    /// value is at least the one published before the fork, 1 if not, 2 if there was none; a
    /// child that deadlocks is killed after 10 s, and the test fails.
    ///
    /// Not under ThreadSanitizer: its runtime does not support `fork()` in a process with
    /// threads (the child can hang in the sanitizer's own locks, whatever ours do), and says so.
    @Test(.disabled(if: Self.underThreadSanitizer, "ThreadSanitizer does not support fork() with threads"))
    func aChildForkedWhileOtherThreadsPublishAndReadReadsTheCurrentValue() throws {
        #if os(Linux)
            let environment = try Environment(values: ["N": 0])
            let published = Atomic<Int>(0)
            let stop = Atomic<Bool>(false)
            let threads = DispatchGroup()
            startThread(threads) {
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    n += 1
                    _ = try? environment.setOverride(.integer(n), forKey: "N")
                    published.store(n, ordering: .releasing)
                }
            }
            for _ in 0..<2 {
                startThread(threads) {
                    while !stop.load(ordering: .relaxed) { _ = environment.get("N", default: -1) }
                }
            }
            defer {
                stop.store(true, ordering: .relaxed)
                threads.wait()
            }

            for round in 0..<20 {
                let result = Locked<(pid: pid_t, before: Int)?>(nil)
                let forked = DispatchSemaphore(value: 0)
                Thread {
                    let before = published.load(ordering: .acquiring)
                    let pid = fork()
                    if pid == 0 {
                        // The child: one read, then out, without running anything of the parent's.
                        let value = environment.get("N", default: -1)
                        _exit(value < 0 ? 2 : value >= before ? 0 : 1)
                    }
                    result.withLock { $0 = (pid, before) }
                    forked.signal()
                }.start()
                forked.wait()
                let (pid, before) = try #require(result.value)
                try #require(pid > 0, "fork failed: \(String(cString: strerror(errno)))")
                let status = waitForExit(pid, within: .seconds(10))
                try #require(status != nil, "round \(round): the child did not exit within 10 s (a deadlock)")
                #expect(status == 0, "round \(round): the child read an older value than \(before) (status \(status!))")
            }
        #endif
    }

    /// Forks while other threads look up keys that are not ASCII, in a table of ASCII keys (the
    /// Kelvin sign's `Key`, and `Kéy`, which is not there) and in a table with a key that is not
    /// ASCII (`café`, decomposed): the lookups a lazily built index once served under a lock that
    /// a child could inherit held. Each child looks both up and exits with 0 if it found the
    /// values, 1 if not; a child that deadlocks is killed after 10 s, and the test fails.
    @Test(.disabled(if: Self.underThreadSanitizer, "ThreadSanitizer does not support fork() with threads"))
    func aChildForkedWhileOtherThreadsReadKeysThatAreNotASCIIReadsThemToo() throws {
        #if os(Linux)
            let ascii = try Environment(values: ["Key": 1, "Other": 2])
            let unicode = try Environment(values: ["caf\u{E9}": 3, "Key": 4])
            let stop = Atomic<Bool>(false)
            let threads = DispatchGroup()
            for _ in 0..<2 {
                startThread(threads) {
                    while !stop.load(ordering: .relaxed) {
                        _ = ascii.get("\u{212A}ey", default: -1)
                        _ = ascii.get("K\u{E9}y", default: -1)
                        _ = unicode.get("cafe\u{301}", default: -1)
                    }
                }
            }
            defer {
                stop.store(true, ordering: .relaxed)
                threads.wait()
            }
            #expect(ascii.get("\u{212A}ey", default: -1) == 1)
            #expect(ascii.get("K\u{E9}y", default: -1) == -1)
            #expect(unicode.get("cafe\u{301}", default: -1) == 3)

            for round in 0..<50 {
                let result = Locked<pid_t?>(nil)
                let forked = DispatchSemaphore(value: 0)
                Thread {
                    let pid = fork()
                    if pid == 0 {
                        // The child: the lookups, then out, without running anything of the parent's.
                        let found =
                            ascii.get("\u{212A}ey", default: -1) == 1 && ascii.get("K\u{E9}y", default: -1) == -1
                            && unicode.get("cafe\u{301}", default: -1) == 3
                        _exit(found ? 0 : 1)
                    }
                    result.withLock { $0 = pid }
                    forked.signal()
                }.start()
                forked.wait()
                let pid = try #require(result.value)
                try #require(pid > 0, "fork failed: \(String(cString: strerror(errno)))")
                let status = waitForExit(pid, within: .seconds(10))
                try #require(status != nil, "round \(round): the child did not exit within 10 s (a deadlock)")
                #expect(status == 0, "round \(round): the child did not find the keys (status \(status!))")
            }
        #endif
    }

    /// Waits for `pid` to exit, for at most `limit`: its exit status, or `nil` if it had not
    /// exited (it is killed then).
    private func waitForExit(_ pid: pid_t, within limit: Duration) -> Int32? {
        let deadline = ContinuousClock.now + limit
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        return nil
    }

    private func startThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
    }

    // MARK: - Thread exit

    /// What a thread-specific value's destructor reads, and how often it ran.
    private final class DestructorProbe: @unchecked Sendable {
        let environment: Environment
        var key = pthread_key_t()
        /// Written by the exiting thread, read after `pthread_join`: what each round's read
        /// returned, and how many threads held a view of the environment right after it.
        var reads: [String?] = []
        var holding: [Int] = []

        init(environment: Environment) { self.environment = environment }
    }

    /// A thread reads, then exits; another thread-specific value's destructor reads again in
    /// the first two rounds of destructors (the second is after the snapshot cache's own
    /// destructor ran, whichever key comes first). No cache may be registered again: right
    /// after the second round's read, and after the thread is gone, no thread holds a view.
    /// (Not in the last rounds: the sanitizers tear their thread state down in the last one.)
    @Test func aReadFromALaterThreadSpecificDestructorRegistersNoCache() throws {
        let environment = try Environment(values: ["A": "one"])
        let probe = DestructorProbe(environment: environment)
        let created = pthread_key_create(&probe.key) { raw in
            guard let raw else { return }
            let probe = Unmanaged<DestructorProbe>.fromOpaque(raw).takeUnretainedValue()
            probe.reads.append((try? probe.environment.require("A", as: String.self)))
            probe.holding.append(probe.environment.threadCachesHoldingViews)
            // Again in the next round.
            if probe.reads.count < 3 { pthread_setspecific(probe.key, raw) }
        }
        try #require(created == 0)
        defer { pthread_key_delete(probe.key) }

        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { raw in
                let probe = Unmanaged<DestructorProbe>.fromOpaque(raw!).takeUnretainedValue()
                // Registers this thread's cache.
                probe.reads.append((try? probe.environment.require("A", as: String.self)))
                pthread_setspecific(probe.key, raw)
                return nil
            }, Unmanaged.passUnretained(probe).toOpaque())
        try #require(started == 0)
        pthread_join(thread, nil)

        #expect(probe.reads == ["one", "one", "one"], "the thread's read, then one in each of two rounds")
        #expect(probe.holding.last == 0, "the second round's read registered no cache: \(probe.holding)")
        #expect(environment.threadCachesHoldingViews == 0, "the exited thread holds no view of the snapshot")
        withExtendedLifetime(probe) {}
    }

    /// A thread that exits normally gives its cache back (the counter the test above uses).
    @Test func aThreadThatReadAndExitedHoldsNoView() throws {
        let environment = try Environment(values: ["A": "one"])
        let holding = Locked<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            // A read that meets another thread's publish sweeping this thread's cache takes the
            // store's locked path and keeps no view (other suites publish all the time): read
            // again until this thread's cache holds one, boundedly.
            for _ in 0..<1_000 where holding.value == 0 {
                _ = (try? environment.require("A", as: String.self))
                holding.withLock { $0 = environment.threadCachesHoldingViews }
            }
            done.signal()
        }.start()
        done.wait()
        #expect(holding.value >= 1, "a reading thread holds a view")
        // The thread's destructors run after `done`: wait for its cache to go, boundedly.
        let deadline = ContinuousClock.now + .seconds(10)
        while environment.threadCachesHoldingViews > 0 && ContinuousClock.now < deadline { usleep(1_000) }
        #expect(environment.threadCachesHoldingViews == 0)
    }

    // MARK: - validate that changes its own environment

    /// Runs `change` from `validate` on every build after the first, keeping what it threw.
    private func environment(
        calling change: @escaping @Sendable (Environment) throws -> Void
    ) throws -> (Environment, Locked<EnvironmentError?>) {
        // Weakly: the environment holds this closure (its options), so a strong reference would
        // be a cycle that outlives the test (LeakSanitizer reports it).
        let target = Locked(WeakEnvironment())
        let thrown = Locked<EnvironmentError?>(nil)
        var options = EnvironmentOptions(environment: "Test", processEnvironment: [:])
        options.validate = { _ in
            guard let environment = target.value.environment else { return }
            do {
                try change(environment)
            } catch let error as EnvironmentError {
                thrown.withLock { $0 = error }
                throw error
            }
        }
        let environment = try Environment(environments: ["Common": ["A": "1"], "Test": [:]], options: options)
        target.withLock { $0.environment = environment }
        return (environment, thrown)
    }

    @Test(arguments: ["reload()", "setOverride(_:forKey:)", "removeAllOverrides()", "check()"])
    func validateThatChangesItsOwnEnvironmentFailsClearly(_ operation: String) throws {
        let (environment, thrown) = try environment { environment in
            switch operation {
            case "reload()": try environment.reload()
            case "setOverride(_:forKey:)": try environment.setOverride("2", forKey: "A")
            case "removeAllOverrides()": try environment.removeAllOverrides()
            default: _ = try environment.check()
            }
        }
        // Any change runs validate; it must throw, not hang.
        let error = #expect(throws: EnvironmentError.self) { try environment.setOverride("3", forKey: "A") }
        #expect(error?.code == .reentrantChange)
        #expect(thrown.value?.code == .reentrantChange)
        #expect(error?.message.contains("validate must not call \(operation)") == true, "\(String(describing: error))")
        #expect((try? environment.require("A", as: String.self)) == "1", "the rejected change is not applied")
        #expect(environment.generation == 1)
    }

    @Test func validateMayReadTheEnvironmentItJudges() throws {
        let (environment, thrown) = try environment { environment in
            #expect((try? environment.require("A", as: String.self)) == "1")  // the snapshot still in service
        }
        try environment.setOverride("2", forKey: "A")
        #expect((try? environment.require("A", as: String.self)) == "2")
        #expect(thrown.value == nil)
    }
}

/// A weak reference to an environment, for a closure that the environment itself holds.
struct WeakEnvironment: Sendable {
    weak var environment: Environment?
}
