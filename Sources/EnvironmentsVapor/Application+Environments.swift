#if Vapor
    public import Environments
    import EnvironmentsDaemon
    public import Vapor

    extension Application {
        private struct EnvironmentsKey: StorageKey {
            typealias Value = Environments.Environment
        }

        /// The application's live configuration: the environment that
        /// ``bootstrapEnvironments(_:configuration:)`` or ``useEnvironment(_:configuration:)`` set
        /// up, else `Environments.Environment.shared` (which, never bootstrapped, loads the
        /// conventional defaults on its first read).
        ///
        /// Every read answers from the current snapshot, so a reload shows in the next read:
        ///
        /// ```swift
        /// let greeting = app.environments[Settings.greeting]          // a declared Setting
        /// let timeout = app.environments.get("RequestTimeout", default: Duration.seconds(5))
        /// ```
        ///
        /// In a route, read ``Vapor/Request/environments`` instead: one snapshot for the whole request.
        public var environments: Environments.Environment {
            storage[EnvironmentsKey.self] ?? .shared
        }

        /// Loads the configuration into `Environments.Environment.shared` and runs the
        /// configuration service with the application's lifecycle: from `willBoot` (reloads on
        /// file change, `SIGHUP` and the control socket; `READY=1` once the files are watched and
        /// Vapor's server accepts connections, as ``VaporEnvironmentsConfiguration/readiness`` says)
        /// until Vapor's shutdown (`STOPPING=1`, the control socket removed).
        ///
        /// Call it once, in `configure(_:)`. The environment is selected as
        /// ``VaporEnvironmentsConfiguration`` says (`options.environment`, else `$APP_ENVIRONMENT`,
        /// else Vapor's environment name mapped), and the library logs through `app.logger`.
        ///
        /// ```swift
        /// var options = EnvironmentOptions(applicationName: "my-service")
        /// options.declaration = Settings.declaration
        /// try app.bootstrapEnvironments(options)
        /// ```
        ///
        /// - Parameters:
        ///   - options: How the configuration is found and checked.
        ///   - configuration: Environment names, the service's behaviour, `SIGHUP`.
        /// - Returns: The shared environment, now also ``environments``.
        /// - Throws: `EnvironmentError` when the configuration cannot be loaded (a bad file, an
        ///   unknown environment, a rejected validation): the application should not start.
        @discardableResult
        public func bootstrapEnvironments(
            _ options: EnvironmentOptions,
            configuration: VaporEnvironmentsConfiguration = VaporEnvironmentsConfiguration()
        ) throws(EnvironmentError) -> Environments.Environment {
            var options = configuration.selectingEnvironment(options, for: environment)
            options.logger = logger
            let environment = try Environments.Environment.bootstrap(options)
            useEnvironment(environment, configuration: configuration)
            return environment
        }

        /// Runs the configuration service for an environment the application made itself (an
        /// `Environments.Environment(options:)` of its own, as a test that runs several
        /// applications in one process does), with the application's lifecycle, and makes it
        /// ``environments``.
        ///
        /// The environment is already selected: use
        /// ``VaporEnvironmentsConfiguration/selectingEnvironment(_:for:processEnvironment:)`` on
        /// the options to select it from Vapor's environment name. Call it once, before the
        /// application boots.
        ///
        /// - Parameters:
        ///   - environment: The environment to keep live.
        ///   - configuration: The service's behaviour and `SIGHUP`.
        public func useEnvironment(
            _ environment: Environments.Environment,
            configuration: VaporEnvironmentsConfiguration = VaporEnvironmentsConfiguration()
        ) {
            storage[EnvironmentsKey.self] = environment
            lifecycle.use(
                EnvironmentServiceRunner(environment: environment, configuration: configuration, logger: logger))
        }
    }
#endif
