package import Environments

/// The configuration the daemon runs on when no Environments.plist exists: the same shape
/// as `etc/example-daemon/Environments.plist`, without the credential.
package enum BuiltInConfiguration {
    /// The whole property list, as `EnvironmentOptions.builtInConfiguration` takes it: `Common`,
    /// one section per environment (Debug, Release, Staging, Production) and `RestartRequired`.
    /// Production has no database password here, and ``ExampleSettings/databasePassword`` requires
    /// one there: in Production the daemon refuses to start on this configuration alone.
    package static let environments: [String: SettingValue] = [
        "Common": [
            "APIHost": "api.example.com",
            "APIBaseUrl": "https://${APIHost}/v1",
            "LogLevel": "info",
            "RequestTimeout": "5s",
            "ListenPort": 8080,
            "HeartbeatInterval": "1min",
            "Database": ["Host": "localhost", "Port": 5432, "Name": "example"],
        ],
        "Debug": ["APIHost": "localhost:8443", "LogLevel": "debug"],
        "Release": [:],
        "Staging": ["APIHost": "staging.api.example.com"],
        "Production": [:],
        "RestartRequired": ["ListenPort"],
    ]
}
