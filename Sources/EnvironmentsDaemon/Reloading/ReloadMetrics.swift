package import CoreMetrics
package import Environments
import EnvironmentsControl

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reload metrics, through swift-metrics, so that any backend an application bootstraps
/// (`MetricsSystem.bootstrap`, swift-prometheus, swift-otel) gets them. The names follow
/// Prometheus's own `prometheus_config_last_reload_successful`:
///
/// | metric | type | meaning |
/// | --- | --- | --- |
/// | `environments_reloads_total{result, trigger}` | counter | reloads by result (`applied`, `unchanged`, `rejected`) and trigger (`file`, `signal`, `control`, or a source's name: `fleet`) |
/// | `environments_last_reload_successful` | gauge | 1 when the last load or reload was good, 0 after a rejected one |
/// | `environments_last_reload_success_timestamp_seconds` | gauge | Unix time of the last good load or reload |
/// | `environments_generation` | gauge | the configuration generation in use |
/// | `environments_reload_duration_seconds` | timer | how long reloads take, each result |
/// | `environments_watch_polling` | gauge | 1 while the file watcher polls (inotify unavailable) |
/// | `environments_fleet_revision_lag` | gauge | fleet mode: etcd revisions between the newest seen and the one in use (kept by EnvironmentsEtcd, with the process's factory) |
package struct ReloadMetrics: Sendable {
    private let factory: any MetricsFactory
    private let lastSuccessful: Gauge
    private let lastSuccessTimestamp: Gauge
    private let generation: Gauge
    private let duration: CoreMetrics.Timer
    private let watchPolling: Gauge

    /// Metrics made by `factory`, or by the factory the process bootstrapped.
    package init(factory: (any MetricsFactory)? = nil) {
        let factory = factory ?? MetricsSystem.factory
        self.factory = factory
        lastSuccessful = Gauge(label: "environments_last_reload_successful", factory: factory)
        lastSuccessTimestamp = Gauge(label: "environments_last_reload_success_timestamp_seconds", factory: factory)
        generation = Gauge(label: "environments_generation", factory: factory)
        duration = CoreMetrics.Timer(label: "environments_reload_duration_seconds", factory: factory)
        watchPolling = Gauge(label: "environments_watch_polling", factory: factory)
    }

    /// Records `report`: the load at start sets the gauges (good, at its generation, not
    /// polling); a reload also counts by result and trigger, and times the reload. An abandoned
    /// reload, which changed nothing, records nothing.
    package func record(_ report: ReloadReport) {
        switch report.outcome {
        case .loaded:
            lastSuccessful.record(1)
            lastSuccessTimestamp.record(report.finished.timeIntervalSince1970)
            generation.record(Double(report.generation))
            watchPolling.record(0)
            return
        case .abandoned: return
        case .applied, .unchanged, .rejected: break
        }
        // `applied`, `unchanged` or `rejected`: the verdict's wire string.
        Counter(
            label: "environments_reloads_total",
            dimensions: [("result", report.verdict.wireName), ("trigger", Self.label(of: report.trigger))],
            factory: factory
        ).increment()
        let microseconds = report.finishedMonotonicMicroseconds &- report.startedMonotonicMicroseconds
        duration.recordNanoseconds(Int64(clamping: microseconds) &* 1_000)
        generation.record(Double(report.generation))
        if report.verdict == .rejected {
            lastSuccessful.record(0)
        } else {
            lastSuccessful.record(1)
            lastSuccessTimestamp.record(report.finished.timeIntervalSince1970)
        }
    }

    /// Whether the file watcher polls.
    func polling(_ isPolling: Bool) {
        watchPolling.record(isPolling ? 1 : 0)
    }

    /// The `trigger` label: `file`, `signal`, `control` (the control socket, or the application)
    /// or a source's name (`fleet`).
    static func label(of trigger: String) -> String {
        trigger
    }
}
