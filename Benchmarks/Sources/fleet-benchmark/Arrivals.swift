import BenchmarkFixtures
import Synchronization

/// When each watching environment applied each change, and when each bare watch received it.
///
/// Environments record the `Counter` they applied, from their `onChange` observer; bare
/// watches record the revision of each message, which the writer learns from its transaction.
final class Arrivals: Sendable {
    private struct State {
        /// By watcher: when it applied each counter (the first time).
        var applied: [[Int: ContinuousClock.Instant]]
        /// By bare watch: when it received each revision (the first time).
        var delivered: [[Int64: ContinuousClock.Instant]]
        /// By counter: how many environments applied it; by revision: how many bare watches
        /// received it (so that waiting does not look through every watcher's arrivals).
        var appliedCount: [Int: Int] = [:]
        var deliveredCount: [Int64: Int] = [:]
    }

    private let state: Mutex<State>
    init(environments: Int, bareWatches: Int) {
        state = Mutex(
            State(
                applied: Array(repeating: [:], count: environments),
                delivered: Array(repeating: [:], count: bareWatches)))
    }

    /// Environment `watcher` applied `counter` at `instant`.
    func applied(watcher: Int, counter: Int, at instant: ContinuousClock.Instant) {
        state.withLock { state in
            if state.applied[watcher][counter] == nil {
                state.applied[watcher][counter] = instant
                state.appliedCount[counter, default: 0] += 1
            }
        }
    }

    /// Bare watch `watch` received a message with `revision` at `instant`.
    func delivered(watch: Int, revision: Int64, at instant: ContinuousClock.Instant) {
        state.withLock { state in
            if state.delivered[watch][revision] == nil {
                state.delivered[watch][revision] = instant
                state.deliveredCount[revision, default: 0] += 1
            }
        }
    }

    /// What arrived for one change.
    struct Change {
        /// By watcher: when it applied the change; `nil` if it did not within the timeout.
        var applied: [ContinuousClock.Instant?]
        /// By bare watch: when it received it; `nil` if it did not within the timeout.
        var delivered: [ContinuousClock.Instant?]

        var isComplete: Bool { !delivered.contains(nil) && !applied.contains(nil) }
    }

    /// The arrivals of the change that wrote `counter` at `revision`, once every environment
    /// and every bare watch have it or `deadline` has passed. With `revision` `nil` (a publish
    /// whose revision this process does not learn in time), the bare watches are not waited for.
    func wait(counter: Int, revision: Int64?, until deadline: ContinuousClock.Instant) async -> Change {
        while true {
            // Polled: the instants are taken by the observers themselves, so how often this
            // looks only decides when the next change is written, not what is measured.
            let complete = state.withLock { state in
                state.appliedCount[counter, default: 0] == state.applied.count
                    && (revision.map { state.deliveredCount[$0, default: 0] == state.delivered.count } ?? true)
            }
            if complete || ContinuousClock.now >= deadline {
                return state.withLock { state in
                    Change(
                        applied: state.applied.map { $0[counter] },
                        delivered: revision.map { revision in state.delivered.map { $0[revision] } } ?? [])
                }
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
