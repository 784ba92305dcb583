import Dispatch
import Foundation
import Locking
import TestSupport
import Testing

/// What the `.blocking` trait (Tests/TestSupport/BlockingTests.swift) promises the suites that
/// carry it: more of their tasks may block at once than Swift's cooperative pool has threads.
@Suite("tests that block", .blocking)
struct BlockingTraitTests {
    /// Sixteen child tasks each wait until all sixteen are waiting. On the cooperative pool (one
    /// thread per core) the ones past the pool's width would never start, and every wait would
    /// end at its timeout.
    @Test func moreTasksBlockAtOnceThanThePoolHasThreads() async {
        let count = max(16, ProcessInfo.processInfo.activeProcessorCount * 4)
        let arrived = Locked(0)
        let everyoneArrived = DispatchSemaphore(value: 0)
        let released = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    if arrived.withLock({
                        $0 += 1; return $0
                    }) == count {
                        for _ in 0..<count { everyoneArrived.signal() }
                    }
                    return everyoneArrived.wait(timeout: .now() + 30) == .success
                }
            }
            var released = 0
            for await wasReleased in group where wasReleased { released += 1 }
            return released
        }
        #expect(released == count)
    }
}
