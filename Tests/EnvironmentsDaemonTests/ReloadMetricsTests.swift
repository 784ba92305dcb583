import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import Logging
import MetricsTestKit
import TestSupport
import Testing
import Varlink

/// The reload metrics of an `EnvironmentService`, read with swift-metrics' test kit: reloads by
/// result and trigger, the last reload's success and time, the generation, the durations.
@Suite("reload metrics", .serialized, .timeLimit(.minutes(10)), .blocking)
struct ReloadMetricsTests {
    @Test("reloads are counted by result and trigger; a rejected one sets last_reload_successful to 0")
    func reloadsAreCounted() async throws {
        let fixture = try ControlSocketFixture()
        try fixture.write(SystemdServiceInterfaceTests.plist(logLevel: "info"))
        let environment = try fixture.environment()
        let metrics = TestMetrics()
        // Files not watched: each reload below has the one trigger it names.
        var configuration = EnvironmentService.Configuration.inTest(controlSocket: fixture.socket)
        configuration.metricsFactory = metrics
        let service = EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: configuration,
            logger: Logger(label: "reload-metrics-tests"))
        try await service.whileRunning {
            await service.waitUntilReady()
            #expect(try metrics.expectGauge("environments_generation").lastValue == 1)
            #expect(try metrics.expectGauge("environments_last_reload_successful").lastValue == 1)
            let loadedAt = try #require(
                try metrics.expectGauge("environments_last_reload_success_timestamp_seconds").lastValue)
            #expect(abs(loadedAt - Date().timeIntervalSince1970) < 600)
            #expect(try metrics.expectGauge("environments_watch_polling").lastValue == 0)

            // Through the control socket: nothing changed.
            let unchanged = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(unchanged.error == nil)
            #expect(Self.reloads(metrics, "unchanged", "control") == 1)

            // A signal's reload of an edited file.
            try fixture.write(SystemdServiceInterfaceTests.plist(logLevel: "info", greeting: "second"))
            await service.reloader.reload(trigger: .signal)
            #expect(Self.reloads(metrics, "applied", "signal") == 1)
            #expect(try metrics.expectGauge("environments_generation").lastValue == 2)

            // A broken file, as the watcher reloads it: rejected, and the gauges say so.
            try fixture.write("<plist><dict>")
            await service.reloader.reload(trigger: .file)
            #expect(Self.reloads(metrics, "rejected", "file") == 1)
            #expect(Self.reloads(metrics, "applied", "file") == 0)
            #expect(try metrics.expectGauge("environments_last_reload_successful").lastValue == 0)
            #expect(try metrics.expectGauge("environments_generation").lastValue == 2)
            let timestamps = try metrics.expectGauge("environments_last_reload_success_timestamp_seconds").values
            #expect(timestamps.count == 3, "the load and the two good reloads: \(timestamps)")

            let durations = try metrics.expectTimer("environments_reload_duration_seconds").values
            #expect(durations.count == 3)
            #expect(durations.allSatisfy { $0 >= 0 })
        }
    }

    private static func reloads(_ metrics: TestMetrics, _ result: String, _ trigger: String) -> Int64 {
        metrics.counterTotal(
            label: "environments_reloads_total", dimensions: [("result", result), ("trigger", trigger)])
    }
}
