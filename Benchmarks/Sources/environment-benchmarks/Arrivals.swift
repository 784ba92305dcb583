import BenchmarkFixtures
import Synchronization

/// When an observer first saw each version of the configuration.
///
/// Observers call ``record(_:)`` with the value they read; the version is the number after
/// the last `/v` of a fixture value (see ``Fixtures/value(_:version:)``).
final class Arrivals: Sendable {
    private let seen = Mutex<[Int: ContinuousClock.Instant]>([:])

    func record(_ value: String) {
        let now = ContinuousClock.now
        guard let range = value.range(of: "/v", options: .backwards), let version = Int(value[range.upperBound...])
        else { return }
        seen.withLock { seen in
            if seen[version] == nil { seen[version] = now }
        }
    }

    /// When `version` was first seen, waiting up to `timeout` for it.
    func wait(for version: Int, timeout: Duration) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let instant = seen.withLock({ $0[version] }) { return instant }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .microseconds(200))
        }
    }
}
