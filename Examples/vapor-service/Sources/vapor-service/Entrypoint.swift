import Environments
import EnvironmentsVapor
import Logging
import Metrics
import Prometheus
import SystemdSupport
import Vapor

// Vapor's `Environment` keeps its meaning in this module: a declaration of the module's own
// wins over both imported ones, in every file. Ours is `app.environments`, `req.environments`
// and, where a type is needed, `Environments.Environment`.
typealias Environment = Vapor.Environment

@main
enum Entrypoint {
    static func main() async throws {
        // `--env production` (or $VAPOR_ENV) names Vapor's environment, which selects ours.
        let env = try Environment.detect()
        LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "vapor-service"))
        // The reload metrics (environments_reloads_total, ...) and Vapor's own, at GET /metrics.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        let app = try await Application.make(env)
        do {
            try configure(app, metrics: registry)
            try await app.execute()
        } catch {
            // A configuration that does not load (a bad file, an unknown environment) ends
            // the start with its reason, in the journal and in `systemctl status`.
            app.logger.critical("vapor-service cannot run: \(error)")
            try? await app.asyncShutdown()
            exit(1)
        }
        try await app.asyncShutdown()
    }
}
