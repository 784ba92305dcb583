#if Fleet
    import Locking

    /// When the hosts of one phase got each change: the light watches and the bare watches by the
    /// revision of each message, the whole environments by the `Counter` they applied (the writer may
    /// learn a change's revision after the first host has it).
    final class Arrivals: Sendable {
        /// How many hosts got one change, and when the last of them did.
        private struct Slot {
            var count = 0
            var last: ContinuousClock.Instant?

            mutating func note(_ instant: ContinuousClock.Instant) {
                count += 1
                last = max(last ?? instant, instant)
            }
        }

        private struct State {
            var byRevision: [Int64: Slot] = [:]
            var byCounter: [Int: Slot] = [:]
            var created = 0
        }

        private let state = Locked(State())
        /// Watches that record revisions (light and bare), and environments that record counters.
        let watches: Int
        let environments: Int

        init(watches: Int, environments: Int) {
            self.watches = watches
            self.environments = environments
        }

        /// A watch is in place.
        func created() {
            state.withLock { $0.created += 1 }
        }

        /// How many watches are in place.
        var createdCount: Int { state.withLock { $0.created } }

        /// A watch received a message with `revision` at `instant`.
        func delivered(revision: Int64, at instant: ContinuousClock.Instant) {
            state.withLock { $0.byRevision[revision, default: Slot()].note(instant) }
        }

        /// An environment applied `counter` at `instant`.
        func applied(counter: Int, at instant: ContinuousClock.Instant) {
            state.withLock { $0.byCounter[counter, default: Slot()].note(instant) }
        }

        /// What arrived of one change.
        struct Change {
            /// Hosts that did not get it in time.
            var missing: Int
            /// When the last host got it (`nil` if none has).
            var last: ContinuousClock.Instant?
        }

        /// The arrivals of the change that wrote `counter` at `revision`, once every host has it or
        /// `deadline` has passed.
        func wait(counter: Int, revision: Int64, until deadline: ContinuousClock.Instant) async -> Change {
            while true {
                // Polled: the instants are taken by the watches themselves, so how often this looks
                // only decides when the next change is written, not what is measured.
                let change = state.withLock { state in
                    let watched = state.byRevision[revision] ?? Slot()
                    let applied = state.byCounter[counter] ?? Slot()
                    let last = [watched.last, applied.last].compactMap { $0 }.max()
                    return Change(
                        missing: max(watches - watched.count, 0) + max(environments - applied.count, 0), last: last)
                }
                if change.missing == 0 || ContinuousClock.now >= deadline { return change }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
    }
#endif
