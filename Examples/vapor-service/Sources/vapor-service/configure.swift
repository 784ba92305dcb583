import Environments
import EnvironmentsVapor
import Prometheus
import Vapor

/// The settings, declared once: every load checks them (type, bounds, unknown keys) before it
/// applies; `envctl schema` and `envctl explain` describe them.
enum Settings {
    static let host = Setting<String>(
        "HTTP.host", default: "127.0.0.1", restartOnly: true, summary: "The address the server binds")
    static let port = Setting<Int>(
        "HTTP.port", default: 8080, bounds: .range(1...65535), restartOnly: true,
        summary: "The TCP port the server binds")
    static let greeting = Setting<String>("Greeting", default: "Hello", summary: "What GET /greeting answers")
    static let environmentLabel = Setting<String?>(
        "Environment", summary: "The environment's name, for the greeting (${Environment})")
    static let logLevel = Setting<String>(
        "LogLevel", default: "info",
        bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"),
        summary: "The lowest level the service logs")
    static let declaration = SettingsDeclaration([host, port, greeting, environmentLabel, logLevel])
}

/// Loads the configuration (files in $CONFIGURATION_DIRECTORY, else /etc/vapor-service/),
/// runs it with the application's lifecycle, and adds the routes.
func configure(_ app: Application, metrics: PrometheusCollectorRegistry) throws {
    var options = EnvironmentOptions(applicationName: "vapor-service")
    options.declaration = Settings.declaration
    // Without any file, the service runs on this built-in configuration.
    options.builtInConfiguration = [
        "Common": ["Greeting": "Hello from the built-in configuration"],
        "Debug": [:],
        "Release": [:],
    ]
    try app.bootstrapEnvironments(options)

    // The server binds once: a changed address is reported as pending a restart.
    app.http.server.configuration.hostname = app.environments[Settings.host]
    app.http.server.configuration.port = app.environments[Settings.port]

    // Read on every request: an applied reload shows in the next answer, without a restart.
    app.get("greeting") { req in
        req.environments[Settings.greeting]
    }
    app.get("config") { req in
        // One snapshot for the whole request: values from one generation.
        let snapshot = req.environments
        return ServiceDescription(
            environment: snapshot.environmentName, vaporEnvironment: req.application.environment.name,
            generation: snapshot.generation, greeting: snapshot[Settings.greeting], port: snapshot[Settings.port])
    }
    // Prometheus's text format, for a scraper on loopback.
    app.get("metrics") { _ in
        Response(
            status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(buffer: ByteBuffer(bytes: metrics.emitToBuffer())))
    }
}

/// What `GET /config` answers: never a secret.
struct ServiceDescription: Content {
    var environment: String
    var vaporEnvironment: String
    var generation: UInt64
    var greeting: String
    var port: Int
}
