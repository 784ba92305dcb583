#if Vapor
    public import Environments
    public import EnvironmentsDaemon
    public import Foundation
    public import Vapor

    /// How a Vapor application runs its configuration: which of our environments each of Vapor's
    /// environment names selects, how the configuration service behaves, and whether `SIGHUP`
    /// reloads.
    ///
    /// Vapor names its environment on the command line (`--env production`, `-e`) or in
    /// `$VAPOR_ENV`, `development` by default. ``Vapor/Application/bootstrapEnvironments(_:configuration:)``
    /// selects our environment in this order, the first that is set:
    ///
    /// 1. `options.environment`, set by the application;
    /// 2. `$APP_ENVIRONMENT`, set by the operator (a unit's `Environment=` line, a `.env` file);
    /// 3. Vapor's environment name through ``names``: `production` selects `Release`,
    ///    `development` and `testing` select `Debug`, the build names the library uses by default;
    ///    a name the table does not hold (`--env staging`) is used as written, so it selects the
    ///    section of that exact name, or fails the start with the known environments listed.
    ///
    /// So one `Environments.plist` with `Debug` and `Release` sections serves `swift run` and a
    /// release deployment started with `--env production`; to give Vapor's `staging` a section
    /// called `Staging`, add `names["staging"] = "Staging"`.
    public struct VaporEnvironmentsConfiguration: Sendable {
        /// Vapor's environment names (`production`, `development`, `testing`), and the names of our
        /// environments they select.
        public static let standardNames = ["production": "Release", "development": "Debug", "testing": "Debug"]

        /// Vapor's environment name to our environment's name; a name missing here is used as written.
        public var names: [String: String]
        /// How the configuration service (reloads, `sd_notify`, the control socket) behaves.
        public var service: EnvironmentService.Configuration
        /// When the configuration service tells systemd `READY=1` (`service.readiness`):
        /// `EnvironmentService.Readiness.whenApplicationServes` by default, once
        /// Vapor's server accepts connections (after its `start(address:)` returns), so that
        /// `systemctl start` returns, and units ordered after this one start, only when the port is
        /// open, and a start whose bind fails never says `READY=1`;
        /// `EnvironmentService.Readiness.whenConfigured` once the configuration
        /// is watched, for an application that runs a command other than `serve` under systemd.
        public var readiness: EnvironmentService.Readiness {
            get { service.readiness }
            set { service.readiness = newValue }
        }
        /// Whether `SIGHUP` (`systemctl reload` of a `Type=notify-reload` unit, `kill -HUP`)
        /// reloads: the signal is trapped when the application boots, and one that arrived earlier
        /// (linking `EnvironmentsDaemon` keeps it from ending the process before `main`) is
        /// honoured then. Turn it off where the process is not the service's own, as in tests.
        public var reloadsOnHangup: Bool

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - names: Vapor's environment names to ours (``standardNames`` by default).
        ///   - service: How the configuration service behaves; its `readiness` becomes
        ///     `EnvironmentService.Readiness.whenApplicationServes` (set
        ///     ``readiness`` afterwards to choose another).
        ///   - reloadsOnHangup: Whether `SIGHUP` reloads.
        public init(
            names: [String: String] = VaporEnvironmentsConfiguration.standardNames,
            service: EnvironmentService.Configuration = EnvironmentService.Configuration(),
            reloadsOnHangup: Bool = true
        ) {
            self.names = names
            self.service = service
            self.reloadsOnHangup = reloadsOnHangup
            self.readiness = .whenApplicationServes
        }

        /// The name of our environment that Vapor's environment selects through ``names``.
        ///
        /// - Parameter vaporEnvironment: The application's environment (`app.environment`).
        public func environmentName(for vaporEnvironment: Vapor.Environment) -> String {
            names[vaporEnvironment.name] ?? vaporEnvironment.name
        }

        /// `options` with the environment selected as the type's summary says: unchanged when
        /// `options.environment` or `$APP_ENVIRONMENT` names one; else Vapor's environment's name
        /// through ``names``.
        ///
        /// - Parameters:
        ///   - options: The options the application made.
        ///   - vaporEnvironment: The application's environment (`app.environment`).
        ///   - processEnvironment: Where `APP_ENVIRONMENT` is looked up; the process's by default.
        public func selectingEnvironment(
            _ options: EnvironmentOptions, for vaporEnvironment: Vapor.Environment,
            processEnvironment: [String: String] = ProcessInfo.processInfo.environment
        ) -> EnvironmentOptions {
            if let explicit = options.environment, !explicit.isEmpty { return options }
            if let variable = processEnvironment["APP_ENVIRONMENT"], !variable.isEmpty { return options }
            var options = options
            options.environment = environmentName(for: vaporEnvironment)
            return options
        }
    }
#endif
