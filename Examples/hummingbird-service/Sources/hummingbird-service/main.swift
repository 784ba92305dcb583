import ArgumentParser
import Configuration
import Environments
import EnvironmentsConfiguration
import EnvironmentsDaemon
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import SystemdSupport

// First: a SIGHUP (systemctl reload) must never kill the service, even while it starts.
let signals = await ReloadSignals.trap()
LoggingSystem.bootstrap(JournalLogHandler.factory(identifier: "hummingbird-service"))
let logger = Logger(label: "hummingbird-service")
// The reload metrics (environments_reloads_total, ...) and any others, served at GET /metrics.
let metricsRegistry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: metricsRegistry))

/// The service's flags: the library parses no command line, the program does.
struct Flags: ParsableArguments {
    @Option(name: .customLong("config-dir"), help: "The directory holding Environments.plist.")
    var configDirectory: String?
    @Option(help: "The environment to run in (default: $APP_ENVIRONMENT, else the build's).")
    var environment: String?
}
let flags = Flags.parseOrExit()

// Environments.plist in --config-dir, $CONFIGURATION_DIRECTORY or /etc/hummingbird-service/;
// the environment from --environment, $APP_ENVIRONMENT or the build. Without any file the
// service runs on its built-in configuration.
var options = EnvironmentOptions(environment: flags.environment, configDirectory: flags.configDirectory)
options.logger = logger  // the library logs through the application's logger
options.applicationName = "hummingbird-service"
options.builtInConfiguration = [
    "Common": [
        "HTTP": ["host": "127.0.0.1", "port": 8080],
        "Greeting": "Hello from the built-in configuration",
    ],
    "Debug": [:],
    "Release": [:],
]
// The settings, declared once: every load checks them (type, bounds, unknown keys) before it
// applies, `envctl schema` and `envctl explain` describe them. The server binds once: a changed
// address waits for a restart (and is reported as pending).
enum Settings {
    static let host = Setting<String>(
        "HTTP.host", default: "127.0.0.1", restartOnly: true, summary: "The address the server binds")
    static let port = Setting<Int>(
        "HTTP.port", default: 8080, bounds: .range(1...65535), restartOnly: true,
        summary: "The TCP port the server binds")
    static let serverName = Setting<String?>("HTTP.serverName", summary: "The Server header's value")
    static let greeting = Setting<String>("Greeting", default: "Hello", summary: "What GET /greeting answers")
    static let environmentLabel = Setting<String?>(
        "Environment", summary: "The environment's name, for the greeting (${Environment})")
    static let logLevel = Setting<String>(
        "LogLevel", default: "info",
        bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"),
        summary: "The lowest level the service logs")
    static let declaration = SettingsDeclaration([host, port, serverName, greeting, environmentLabel, logLevel])
}
options.declaration = Settings.declaration
let environment: Environments.Environment  // Hummingbird has an `Environment` too (its environment variables)
do {
    environment = try Environments.Environment.bootstrap(options)
} catch {
    logger.critical("cannot load the configuration: \(error)")
    exit(1)
}

// Every library that takes a ConfigReader reads the same, live configuration.
let reader = ConfigReader(provider: EnvironmentProvider(environment: environment))

let router = Router()
// Read on every request: an applied reload shows in the next answer, without a restart.
router.get("greeting") { _, _ -> String in
    reader.string(forKey: "Greeting", default: Settings.greeting.defaultValue)
}
router.get("config") { _, _ -> ServiceDescription in
    // One snapshot: values from the same generation, even if a reload lands meanwhile.
    let snapshot = reader.snapshot()
    let current = environment.snapshot
    return ServiceDescription(
        environment: current.environmentName, generation: current.generation,
        greeting: snapshot.string(forKey: "Greeting", default: Settings.greeting.defaultValue),
        port: snapshot.scoped(to: "HTTP").int(forKey: "port", default: Settings.port.defaultValue))
}

// Prometheus's text format, for a scraper on loopback (the unit binds nothing else).
router.get("metrics") { _, _ -> Response in
    Response(
        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
        body: ResponseBody(byteBuffer: ByteBuffer(bytes: metricsRegistry.emitToBuffer())))
}

// READY=1 once the server accepts connections (and the configuration is watched), not before:
// systemctl start returns, and units ordered after this one start, only when the port is open;
// a start whose bind fails never says READY=1 (the process exits non-zero, the start fails).
var serviceConfiguration = EnvironmentService.Configuration()
serviceConfiguration.readiness = .whenApplicationServes
let service = EnvironmentService(
    environment: environment, reloadSignals: signals, configuration: serviceConfiguration, logger: logger)
let app = Application(
    router: router,
    configuration: ApplicationConfiguration(reader: reader.scoped(to: "HTTP")),
    onServerRunning: { _ in await service.applicationIsServing() },
    logger: logger)
let group = ServiceGroup(
    services: [service, app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
do {
    try await group.run()
} catch {
    // The server could not bind (the port is taken) or failed: the reason in the journal, and
    // exit status 1, which systemd reports as a failed start (READY=1 never went out).
    logger.critical("hummingbird-service stopped: \(error)")
    exit(1)
}

/// What `GET /config` answers: never a secret.
struct ServiceDescription: ResponseEncodable {
    var environment: String
    var generation: UInt64
    var greeting: String
    var port: Int
}
