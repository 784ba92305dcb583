import BenchmarkFixtures
import Configuration
import Environments
import EnvironmentsConfiguration
import EnvironmentsDaemon
import Foundation
import SystemPackage

/// Milliseconds from the rename of a new configuration file into place until an observer
/// sees the new value.
struct ReloadLatencyBenchmark {
    /// How a change reaches the application.
    enum Contender: String, CaseIterable, Sendable {
        case oursInotify = "ours_inotify"
        case oursSighup = "ours_sighup"
        case oursVarlink = "ours_varlink"
        case swiftConfigurationDefault = "swift_configuration_default"
        case swiftConfiguration100ms = "swift_configuration_100ms"
        case swiftConfigurationSighup = "swift_configuration_sighup"
        /// `ConfigReader.watchString(forKey:)` over `EnvironmentProvider` (the interop part).
        case oursProvider = "ours_provider"

        /// The contenders of the reload part.
        static let reloadPart: [Contender] = [
            .oursInotify, .oursSighup, .oursVarlink, .swiftConfigurationDefault, .swiftConfiguration100ms,
            .swiftConfigurationSighup,
        ]

        var title: String {
            switch self {
            case .oursInotify: "ours, inotify (EnvironmentService)"
            case .oursSighup: "ours, SIGHUP (EnvironmentService)"
            case .oursVarlink: "ours, Reload on the control socket (as envctl reload)"
            case .swiftConfigurationDefault: "swift-configuration, default 15 s poll"
            case .swiftConfiguration100ms: "swift-configuration, 100 ms poll"
            case .swiftConfigurationSighup: "swift-configuration, SIGHUP"
            case .oursProvider: "ours, ConfigReader.watchString over EnvironmentProvider (inotify)"
            }
        }
    }

    struct Result: Sendable {
        var contender: Contender
        /// Latencies in milliseconds, one per change seen.
        var latencies: Statistics
        /// Changes never seen within the timeout.
        var missed: Int
    }

    /// Settings in the file (the observer watches one of them).
    let keyCount = 100
    let changes: Int
    let defaultPollChanges: Int

    func run(_ contender: Contender, progress: (String) -> Void) async throws -> Result {
        let count = contender == .swiftConfigurationDefault ? defaultPollChanges : changes
        progress("reload latency: \(contender.title), \(count) changes")
        switch contender {
        case .oursInotify: return try await runOurs(contender, changes: count, watchFiles: true)
        case .oursSighup: return try await runOurs(contender, changes: count, watchFiles: false)
        case .oursVarlink: return try await runOurs(contender, changes: count, watchFiles: false, viaSocket: true)
        case .oursProvider: return try await runOurs(contender, changes: count, watchFiles: true, throughReader: true)
        case .swiftConfigurationDefault:
            return try await runPeer(contender, changes: count, pollInterval: .seconds(15), signal: false)
        case .swiftConfiguration100ms:
            return try await runPeer(contender, changes: count, pollInterval: .milliseconds(100), signal: false)
        case .swiftConfigurationSighup:
            return try await runPeer(contender, changes: count, pollInterval: .seconds(3600), signal: true)
        }
    }

    private var probeKey: String { Fixtures.keys(keyCount)[0] }

    private func runOurs(
        _ contender: Contender, changes: Int, watchFiles: Bool, throughReader: Bool = false, viaSocket: Bool = false
    ) async throws -> Result {
        let directory = try Fixtures.makeDirectory("reload-\(contender.rawValue)")
        let file = directory + "/Environments.plist"
        try Fixtures.environmentsPlist(Fixtures.settings(keyCount)).write(to: URL(fileURLWithPath: file))
        let sink = try DatagramSink(directory: directory)
        defer { sink.close() }

        let environment = try Environment(
            options: Fixtures.options(directory))
        let arrivals = Arrivals()
        let probeKey = self.probeKey
        // The observer: an onChange callback, or a swift-configuration reader's watch.
        var observation: ObserverToken?
        var watching: Task<Void, any Error>?
        if throughReader {
            let reader = ConfigReader(provider: EnvironmentProvider(environment: environment))
            watching = Task {
                try await reader.watchString(forKey: ConfigKey(probeKey)) { updates in
                    for await value in updates {
                        if let value { arrivals.record(value) }
                    }
                }
            }
        } else {
            observation = environment.onChange { _ in arrivals.record(environment.get(probeKey, default: "")) }
        }
        defer {
            observation?.cancel()
            watching?.cancel()
        }

        let signals = watchFiles || viaSocket ? nil : await ReloadSignals.trap()
        let service = await BenchmarkService.start(
            environment, in: directory, journal: sink, watchFiles: watchFiles, controlSocket: viaSocket,
            reloadSignals: signals)
        defer { service.cancel() }
        try await Task.sleep(for: .milliseconds(50))  // the signal handler task starts after ready

        let result = try await measure(contender, changes: changes, file: file, arrivals: arrivals) {
            try Fixtures.environmentsPlist($0)
        } after: {
            if viaSocket {
                // The whole round trip, as `envctl reload` makes it: connect, call, verdict.
                VarlinkReload.call(service.socket)
            } else if !watchFiles {
                kill(getpid(), SIGHUP)
            }
        }
        await service.stop()
        return result
    }

    private func runPeer(
        _ contender: Contender, changes: Int, pollInterval: Duration, signal: Bool
    ) async throws -> Result {
        let directory = try Fixtures.makeDirectory("reload-\(contender.rawValue)")
        let file = directory + "/config.plist"
        try Fixtures.flatPlist(Fixtures.settings(keyCount)).write(to: URL(fileURLWithPath: file))
        let provider = try await ReloadingFileProvider<PropertyListSnapshot>(
            filePath: FilePath(file), pollInterval: pollInterval)
        let reader = ConfigReader(provider: provider)
        let arrivals = Arrivals()
        let running = Task { try await provider.run() }
        let probeKey = ConfigKey(self.probeKey)
        let watching = Task {
            try await reader.watchString(forKey: probeKey) { updates in
                for await value in updates {
                    if let value { arrivals.record(value) }
                }
            }
        }
        defer {
            watching.cancel()
            running.cancel()
        }
        guard await arrivals.wait(for: 0, timeout: .seconds(5)) != nil else {
            throw BenchmarkError("swift-configuration's watch never delivered the first value")
        }
        try await Task.sleep(for: .milliseconds(100))  // let run() trap SIGHUP

        let result = try await measure(
            contender, changes: changes, file: file, arrivals: arrivals, timeout: pollInterval * 2 + .seconds(2),
            spacing: signal ? nil : pollInterval
        ) {
            try Fixtures.flatPlist($0)
        } after: {
            if signal { kill(getpid(), SIGHUP) }
        }
        watching.cancel()
        running.cancel()
        _ = try? await watching.value
        _ = try? await running.value
        return result
    }

    /// Renames `changes` new versions of the file into place, one at a time, and collects how
    /// long each took to reach the observer. Changes are 10–30 ms apart; with a polling
    /// `spacing`, a random 10 ms to `spacing` + 10 ms apart, so that each lands at a random
    /// point of the poll interval (right after a poll saw the previous one, every change would
    /// wait a whole interval).
    private func measure(
        _ contender: Contender, changes: Int, file: String, arrivals: Arrivals, timeout: Duration = .seconds(2),
        spacing: Duration? = nil, content: ([String: String]) throws -> Data, after: () -> Void
    ) async throws -> Result {
        var latencies: [Double] = []
        var missed = 0
        let temporary = file + ".new"
        for version in 1...max(changes, 1) {
            try content(Fixtures.settings(keyCount, version: version)).write(to: URL(fileURLWithPath: temporary))
            let renamed = ContinuousClock.now
            guard rename(temporary, file) == 0 else {
                throw BenchmarkError("rename \(temporary): \(String(cString: strerror(errno)))")
            }
            after()
            if let seen = await arrivals.wait(for: version, timeout: timeout) {
                latencies.append((seen - renamed).milliseconds)
            } else {
                missed += 1
            }
            if let spacing {
                try await Task.sleep(for: .milliseconds(10) + spacing * Double.random(in: 0..<1))
            } else {
                try await Task.sleep(for: .milliseconds(Int.random(in: 10...30)))
            }
        }
        return Result(contender: contender, latencies: Statistics(latencies), missed: missed)
    }
}
