#if SwiftConfiguration
    public import Configuration
    public import Environments

    /// A live `ConfigProvider` for apple/swift-configuration over an `Environment`.
    ///
    /// Every effective value of the environment (files, drop-ins, compiled-in defaults, runtime
    /// overrides, interpolation) reads through a `ConfigReader`, so libraries that take one —
    /// Hummingbird's `ApplicationConfiguration(reader:)`, AsyncHTTPClient's
    /// `HTTPClient.Configuration(configReader:)` — read the same configuration as the rest of
    /// the program:
    ///
    /// ```swift
    /// import Configuration
    /// import Environments
    /// import EnvironmentsConfiguration
    ///
    /// let reader = ConfigReader(provider: EnvironmentProvider(environment: .shared))
    /// let host = reader.string(forKey: "Database.Host", default: "localhost")
    /// let http = ApplicationConfiguration(reader: reader.scoped(to: "HTTP"))
    /// ```
    ///
    /// - Keys: the components of a `ConfigKey` are the parts of a dotted path, so
    ///   `["Database", "Host"]` reads `Database.Host` and `reader.scoped(to: "Database")` works.
    /// - Types: values convert as the environment's own typed reads convert them (an
    ///   interpolated `"8080"` reads as an int, `"yes"` as a bool; bytes come from `<data>` or
    ///   from a base64 string, as a credential gives them). A value
    ///   that cannot be read as the requested type throws an `EnvironmentError`
    ///   naming the key, the file and the layer. A key that names a dictionary has no value, as
    ///   with swift-configuration's own file providers.
    /// - Secrets: keys listed in `Secrets` and values that came through `${credential:...}` come
    ///   back with `isSecret` set, so swift-configuration's descriptions and access reporters
    ///   redact them.
    /// - Live: ``watchValue(forKey:type:updatesHandler:)`` and
    ///   ``watchSnapshot(updatesHandler:)`` deliver every change the environment applies (file
    ///   change, `SIGHUP`, `systemctl reload`, runtime overrides) as it is applied: no polling. A
    ///   rejected reload delivers nothing, and the old values stay.
    /// - Consistent: ``snapshot()`` wraps one immutable `EnvironmentSnapshot`, so
    ///   values read from it belong to one generation.
    ///
    /// The provider keeps nothing but a reference to the environment: create as many as you like.
    public struct EnvironmentProvider: Sendable {
        /// The environment whose values the provider serves.
        package let environment: Environment

        /// The provider's name in swift-configuration's diagnostics and access reports.
        public let providerName: String

        /// Creates a provider over an environment.
        ///
        /// - Parameters:
        ///   - environment: The environment to read, usually `Environment.shared`
        ///     (after `Environment.bootstrap(_:)`).
        ///   - providerName: The name swift-configuration shows for this provider.
        public init(environment: Environment, providerName: String = "EnvironmentProvider") {
            self.environment = environment
            self.providerName = providerName
        }

        /// The path (`SettingPath`'s text, `Database.Host`) that a key's components name, each
        /// component literal: `["Upstreams", "api.example.com"]` is `Upstreams."api.example.com"`.
        static func path(of key: AbsoluteConfigKey) -> String {
            let components = key.components
            if components.count == 1 { return SettingPath.quoted(components[0]) }
            // The common case, no component to quote, costs what a join costs.
            if !components.contains(where: SettingPath.needsQuotes) { return components.joined(separator: ".") }
            return components.map(SettingPath.quoted).joined(separator: ".")
        }

        /// The lookup of `path` as `type` in one snapshot.
        static func lookup(_ path: String, as type: ConfigType, in snapshot: EnvironmentSnapshot)
            throws(EnvironmentError)
            -> LookupResult
        {
            try lookup(path, as: type, configured: snapshot.configuredValue(forKey: path), in: snapshot.environmentName)
        }

        /// The lookup result for `configured`, the value found at `path` (or `nil`) in `environmentName`.
        static func lookup(
            _ path: String, as type: ConfigType, configured: ConfiguredValue?,
            in environmentName: @autoclosure () -> String
        ) throws(EnvironmentError) -> LookupResult {
            guard let configured else { return LookupResult(encodedKey: path, value: nil) }
            // A dictionary is not a value of its own: its members are (as with the file providers).
            if case .dictionary = configured.value { return LookupResult(encodedKey: path, value: nil) }
            guard let content = configured.value.configContent(as: type) else {
                throw EnvironmentError.typeMismatch(
                    path, configured, expected: type.settingTypeName, environment: environmentName())
            }
            return LookupResult(encodedKey: path, value: ConfigValue(content, isSecret: configured.isSecret))
        }
    }

    extension EnvironmentProvider: ConfigProvider {
        /// The current value of a key, converted to `type`.
        ///
        /// - Returns: The value, or a result without a value when the key has none (or names a
        ///   dictionary).
        /// - Throws: `EnvironmentError` with code `typeMismatch` when the value
        ///   cannot be read as `type`.
        public func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
            // One lookup in the current snapshot's value table, without retaining the snapshot or
            // copying the value's source; the source is looked up only to explain a mismatch.
            let path = Self.path(of: key)
            guard let (value, isSecret) = environment.valueAndSecrecy(forKey: path) else {
                return LookupResult(encodedKey: path, value: nil)
            }
            if case .dictionary = value { return LookupResult(encodedKey: path, value: nil) }
            if let content = value.configContent(as: type) {
                return LookupResult(encodedKey: path, value: ConfigValue(content, isSecret: isSecret))
            }
            return try Self.lookup(path, as: type, in: environment.snapshot)
        }

        /// The current value of a key, as ``value(forKey:type:)`` returns it.
        ///
        /// The environment is its own authority: its files are watched and its reloads applied as
        /// they happen, so there is nothing further to contact.
        nonisolated(nonsending) public func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws
            -> LookupResult
        {
            try value(forKey: key, type: type)
        }

        /// Watches one key: the current result first, then a new one each time an applied change
        /// gives the key another value (or secrecy, or makes it fail to convert).
        ///
        /// Changes that leave the key as it was are not delivered. A consumer that falls behind
        /// sees the newest result, never an older one after a newer one.
        nonisolated(nonsending) public func watchValue<Return: ~Copyable>(
            forKey key: AbsoluteConfigKey,
            type: ConfigType,
            updatesHandler:
                nonisolated(nonsending) (
                    _ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
                ) async throws -> Return
        ) async throws -> Return {
            let path = Self.path(of: key)
            let feed = SnapshotFeed<Result<LookupResult, any Error>>(environment: environment) { snapshot in
                Result { () throws(EnvironmentError) -> LookupResult in try Self.lookup(path, as: type, in: snapshot) }
                    .mapError { $0 as any Error }
            } isRepeat: { previous, next in
                switch (previous, next) {
                case (.success(let old), .success(let new)): old == new
                case (.failure(let old), .failure(let new)): "\(old)" == "\(new)"
                default: false
                }
            }
            defer { feed.finish() }
            return try await updatesHandler(ConfigUpdatesAsyncSequence(feed.stream))
        }

        /// The current snapshot: one generation of the environment, immutable.
        public func snapshot() -> any ConfigSnapshot {
            Snapshot(environmentSnapshot: environment.snapshot, providerName: providerName)
        }

        /// Watches the whole configuration: the current snapshot first, then one for each applied
        /// change. A consumer that falls behind gets the newest snapshot next.
        nonisolated(nonsending) public func watchSnapshot<Return: ~Copyable>(
            updatesHandler:
                nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>)
                async throws -> Return
        ) async throws -> Return {
            let providerName = self.providerName
            let feed = SnapshotFeed<any ConfigSnapshot>(environment: environment) { snapshot in
                Snapshot(environmentSnapshot: snapshot, providerName: providerName)
            } isRepeat: { _, _ in
                false
            }
            defer { feed.finish() }
            return try await updatesHandler(ConfigUpdatesAsyncSequence(feed.stream))
        }
    }

    extension EnvironmentProvider: CustomStringConvertible {
        /// For example `EnvironmentProvider[Production, generation 3, 12 values]`.
        public var description: String {
            let snapshot = environment.snapshot
            return "\(providerName)[\(snapshot.environmentName), generation \(snapshot.generation), "
                + "\(snapshot.leafCount) values]"
        }
    }
#endif
