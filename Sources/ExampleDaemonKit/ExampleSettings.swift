package import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// The example daemons' settings, declared once: every load checks the configuration against
/// them (types, bounds, required, unknown keys), `envctl schema` and `envctl explain` describe
/// them, and the daemons read them through these values.
///
/// `example-daemon --print-schema` writes them as JSON Schema; the Debian package installs that
/// file as `/usr/share/example-daemon/schema.json`, which `envctl check --app-name
/// example-daemon` reads where the daemon does not run.
package enum ExampleSettings {
    /// `ListenPort`: the TCP port, 1 to 65535, default 8080. Restart-only: a reload that changes
    /// it keeps the old value and reports the change as pending until the daemon restarts.
    package static let listenPort = Setting<Int>(
        "ListenPort", default: 8080, bounds: .range(1...65535), restartOnly: true,
        summary: "The TCP port the daemon listens on")
    /// `RequestTimeout`: how long one API request may take, from 1 ms to 10 minutes, default
    /// 5 seconds; written as a duration such as `5s` or `250ms`.
    package static let requestTimeout = Setting<Duration>(
        "RequestTimeout", default: .seconds(5), bounds: .range(.milliseconds(1)...(.seconds(600))),
        summary: "How long a request to the API may take")
    /// `HeartbeatInterval`: the time between two of the ``Worker``'s debug heartbeats, from
    /// 100 ms to one day, default one minute; a new value applies once the current wait ends.
    package static let heartbeatInterval = Setting<Duration>(
        "HeartbeatInterval", default: .seconds(60), bounds: .range(.milliseconds(100)...(.seconds(86_400))),
        summary: "How often the worker logs a heartbeat at the debug level")
    /// `LogLevel`: the lowest level logged, one of swift-log's level names (`trace` to
    /// `critical`), default `info`. The configuration service applies it after every load,
    /// unless `io.systemd.service.SetLogLevel` has set a level until the next restart.
    package static let logLevel = Setting<String>(
        "LogLevel", default: "info",
        bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"),
        summary: "The lowest level the daemon logs (swift-log's levels)")
    /// `APIHost`: the API's host name, with a port when it is not the scheme's
    /// (`localhost:8443`); optional. `APIBaseUrl` interpolates it: `https://${APIHost}/v1`.
    package static let apiHost = Setting<String?>(
        "APIHost", summary: "The API's host name (and port), used by APIBaseUrl")
    /// `APIBaseUrl`: the API's base URL, required in every environment, `http` or `https`
    /// (``ExampleArguments/environmentOptions(build:)`` allows only `https` in Production).
    package static let apiBaseURL = Setting<URL?>(
        "APIBaseUrl", required: .always, bounds: .schemes("http", "https"),
        summary: "The API's base URL")
    /// `Database.Host`: the database server's host name, default `localhost`.
    package static let databaseHost = Setting<String>(
        "Database.Host", default: "localhost", summary: "The database server's host name")
    /// `Database.Port`: the database server's port, 1 to 65535, default 5432.
    package static let databasePort = Setting<Int>(
        "Database.Port", default: 5432, bounds: .range(1...65535), summary: "The database server's port")
    /// `Database.Name`: the database's name on its server, default `example`.
    package static let databaseName = Setting<String>(
        "Database.Name", default: "example", summary: "The database's name")
    /// `Database.Password`: the database password, required in Production and `nil` elsewhere
    /// when unset. Secret: logs, `envctl` and the control socket show it as `<redacted>`. Give it
    /// as `${credential:db-password}`, read from `$CREDENTIALS_DIRECTORY` (the unit's
    /// `LoadCredential=`), so the password itself is in no configuration file.
    package static let databasePassword = Setting<String?>(
        "Database.Password", required: .in("Production"), secret: true,
        summary: "The database password (a credential: ${credential:db-password})")

    /// Every setting above.
    package static let declaration = SettingsDeclaration([
        listenPort, requestTimeout, heartbeatInterval, logLevel, apiHost, apiBaseURL, databaseHost, databasePort,
        databaseName, databasePassword,
    ])
}
