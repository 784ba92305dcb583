import Dispatch
import Environments
import Locking
import Testing

/// Collects what an observer receives, and waits for it: callbacks run on the environment's
/// own queue, after the change that triggers them has returned.
final class Received: Sendable {
    let changes = Locked<[EnvironmentChange]>([])
    private let arrivals = DispatchSemaphore(value: 0)

    func record(_ change: EnvironmentChange) {
        changes.withLock { $0.append(change) }
        arrivals.signal()
    }

    /// Waits for `count` more changes (a hang guard of a minute each, not a timing goal).
    func wait(for count: Int) {
        for _ in 0..<count { #expect(arrivals.wait(timeout: .now() + 60) == .success, "an observer was not called") }
    }

    var keys: [[String]] { changes.value.map(\.changedKeys) }
}
