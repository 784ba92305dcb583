@_spi(Integrations) import Environments
import Foundation

/// The example daemons' settings, declared once: every load checks the configuration against
/// them (types, bounds, required, unknown keys), `envctl schema` and `envctl explain` describe
/// them, and the daemons read them through these values.
///
/// `example-daemon --print-schema` writes them as JSON Schema; the Debian package installs that
/// file as `/usr/share/example-daemon/schema.json`, which `envctl check --app-name
/// example-daemon` reads where the daemon does not run.
@_spi(Integrations) public enum ExampleSettings {
    @_spi(Integrations) public static let listenPort = Setting<Int>(
        "ListenPort", default: 8080, bounds: .range(1...65535), restartOnly: true,
        summary: "The TCP port the daemon listens on")
    @_spi(Integrations) public static let requestTimeout = Setting<Duration>(
        "RequestTimeout", default: .seconds(5), bounds: .range(.milliseconds(1)...(.seconds(600))),
        summary: "How long a request to the API may take")
    @_spi(Integrations) public static let heartbeatInterval = Setting<Duration>(
        "HeartbeatInterval", default: .seconds(60), bounds: .range(.milliseconds(100)...(.seconds(86_400))),
        summary: "How often the worker logs a heartbeat at the debug level")
    @_spi(Integrations) public static let logLevel = Setting<String>(
        "LogLevel", default: "info",
        bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"),
        summary: "The lowest level the daemon logs (swift-log's levels)")
    @_spi(Integrations) public static let apiHost = Setting<String?>(
        "APIHost", summary: "The API's host name (and port), used by APIBaseUrl")
    @_spi(Integrations) public static let apiBaseURL = Setting<URL?>(
        "APIBaseUrl", required: .always, bounds: .schemes("http", "https"),
        summary: "The API's base URL")
    @_spi(Integrations) public static let databaseHost = Setting<String>(
        "Database.Host", default: "localhost", summary: "The database server's host name")
    @_spi(Integrations) public static let databasePort = Setting<Int>(
        "Database.Port", default: 5432, bounds: .range(1...65535), summary: "The database server's port")
    @_spi(Integrations) public static let databaseName = Setting<String>(
        "Database.Name", default: "example", summary: "The database's name")
    @_spi(Integrations) public static let databasePassword = Setting<String?>(
        "Database.Password", required: .in("Production"), secret: true,
        summary: "The database password (a credential: ${credential:db-password})")

    /// Every setting above.
    @_spi(Integrations) public static let declaration = SettingsDeclaration([
        listenPort, requestTimeout, heartbeatInterval, logLevel, apiHost, apiBaseURL, databaseHost, databasePort,
        databaseName, databasePassword,
    ])
}
