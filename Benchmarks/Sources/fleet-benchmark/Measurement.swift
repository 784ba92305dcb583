import BenchmarkFixtures
import Foundation

/// Writes changes one at a time and times their arrival.
struct Measurement {
    /// Writes the fleet's main document, in a transaction as `envctl publish` does.
    let writer: FleetWriter
    let arrivals: Arrivals
    /// How long a change may take to reach every environment and bare watch.
    var timeout: Duration = .seconds(10)
    /// The pause after each change, so that changes do not pile up.
    var pause: Duration = .milliseconds(20)

    /// What one change took, in ms from just before its transaction.
    struct Sample {
        /// By environment: until it applied the change.
        var applied: [Double]
        /// By bare watch: until it received the change.
        var delivered: [Double]
    }

    /// The samples of the changes numbered `counters`, and a line for each that failed.
    func run(_ counters: some Sequence<Int>) async -> (samples: [Sample], failures: [String]) {
        var samples: [Sample] = []
        var failures: [String] = []
        for counter in counters {
            let document = FleetDocument.data(counter: counter)
            let revision: Int64
            let start: ContinuousClock.Instant
            do {
                (revision, start) = try await writer.publish(document)
            } catch {
                failures.append("change \(counter): the transaction failed: \(error)")
                continue
            }
            let change = await arrivals.wait(counter: counter, revision: revision, until: start + timeout)
            if change.isComplete {
                samples.append(
                    Sample(
                        applied: change.applied.map { ($0! - start).milliseconds },
                        delivered: change.delivered.map { ($0! - start).milliseconds }))
            } else {
                let missing = change.applied.indices.filter { change.applied[$0] == nil }
                var what: [String] = []
                if !missing.isEmpty {
                    what.append(
                        "\(missing.count) of \(change.applied.count) environments did not apply it "
                            + "(\(missing.map { "#\($0)" }.joined(separator: ", ")))")
                }
                let undelivered = change.delivered.filter { $0 == nil }.count
                if undelivered > 0 {
                    what.append("\(undelivered) of \(change.delivered.count) bare watches did not receive it")
                }
                failures.append(
                    "change \(counter) (revision \(revision)): within \(timeout), \(what.joined(separator: "; "))")
            }
            try? await Task.sleep(for: pause)
        }
        return (samples, failures)
    }
}
