#if Fleet
    import Foundation

    /// Publishes changes one at a time and times their arrival at every host of a phase.
    struct Measurement {
        /// Writes the fleet's main document, in a transaction as `envctl publish` does.
        let writer: FleetWriter
        let arrivals: Arrivals
        /// How long a change may take to reach every host.
        var timeout: Duration = .seconds(30)
        /// The pause after each change, so that changes do not pile up.
        var pause: Duration = .milliseconds(100)

        /// By change: ms from just before its transaction until the last host got it; and a line for
        /// each change that did not reach every host.
        func run(_ counters: some Sequence<Int>) async -> (lastArrival: [Double], failures: [String]) {
            var samples: [Double] = []
            var failures: [String] = []
            for counter in counters {
                let revision: Int64
                let start: ContinuousClock.Instant
                do {
                    (revision, start) = try await writer.publish(FleetDocument.data(counter: counter))
                } catch {
                    failures.append("change \(counter): the transaction failed: \(error)")
                    continue
                }
                let change = await arrivals.wait(counter: counter, revision: revision, until: start + timeout)
                if change.missing == 0 {
                    samples.append(change.last.map { ($0 - start).milliseconds } ?? 0)
                } else {
                    failures.append(
                        "change \(counter) (revision \(revision)): \(change.missing) of \(arrivals.watches + arrivals.environments) hosts did not get it within \(timeout)"
                    )
                }
                try? await Task.sleep(for: pause)
            }
            return (samples, failures)
        }
    }
#endif
