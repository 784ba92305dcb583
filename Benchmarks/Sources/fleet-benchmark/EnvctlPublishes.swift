import BenchmarkFixtures
import Foundation
import Synchronization

/// Changes published by a real `envctl publish` process, timed from its launch until every
/// environment applied the change; beside the time until the process exited.
struct EnvctlPublishes {
    /// The envctl executable.
    let envctl: String
    let endpoints: [String]
    let prefix: String
    let arrivals: Arrivals
    /// Where the published files are written.
    let directory: URL
    var timeout: Duration = .seconds(20)

    /// What one publish took, in ms from the launch of envctl.
    struct Sample {
        /// Until every environment applied it.
        var applied: Double
        /// Until envctl exited (after its transaction succeeded).
        var exited: Double
    }

    /// Publishes the changes numbered `counters`, one envctl process each.
    func run(_ counters: some Sequence<Int>) async -> (samples: [Sample], failures: [String]) {
        var samples: [Sample] = []
        var failures: [String] = []
        for counter in counters {
            let folder = directory.appendingPathComponent("envctl-\(counter)")
            let file = folder.appendingPathComponent("Environments.plist")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try FleetDocument.data(counter: counter).write(to: file)
            } catch {
                failures.append("envctl publish \(counter): cannot write \(file.path): \(error)")
                continue
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: envctl)
            process.arguments = [
                "publish", "--etcd-endpoints", endpoints.joined(separator: ","), "--etcd-prefix", prefix,
                "--environment", "Production", file.path,
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            let exited = ExitInstant()
            process.terminationHandler = { _ in exited.instant.withLock { $0 = .now } }
            let start = ContinuousClock.now
            do {
                try process.run()
            } catch {
                failures.append("envctl publish \(counter): cannot run \(envctl): \(error)")
                continue
            }
            let change = await arrivals.wait(counter: counter, revision: nil, until: start + timeout)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                failures.append("envctl publish \(counter) exited \(process.terminationStatus): \(text)")
                continue
            }
            // Foundation calls the termination handler on a thread of its own, which may run
            // after waitUntilExit() returned.
            var end = exited.instant.withLock { $0 }
            let reported = ContinuousClock.now + .seconds(5)
            while end == nil, ContinuousClock.now < reported {
                try? await Task.sleep(for: .milliseconds(1))
                end = exited.instant.withLock { $0 }
            }
            let missing = change.applied.filter { $0 == nil }.count
            guard missing == 0, let end else {
                failures.append(
                    missing > 0
                        ? "envctl publish \(counter): \(missing) environments did not apply it within \(timeout)"
                        : "envctl publish \(counter): its exit was never reported")
                continue
            }
            samples.append(
                Sample(
                    applied: (change.applied.map { $0! }.max()! - start).milliseconds,
                    exited: (end - start).milliseconds))
            try? await Task.sleep(for: .milliseconds(20))
        }
        return (samples, failures)
    }
}

/// When a process exited, set by its termination handler.
private final class ExitInstant: Sendable {
    let instant = Mutex<ContinuousClock.Instant?>(nil)
}
