import Foundation

/// Per-environment configuration for a program: `Environment.shared.fetch("APIBaseUrl")`.
///
/// An environment loads `Environments.plist` (and its drop-ins), selects one environment
/// section, layers it over `Common` and the compiled-in defaults, interpolates `${...}`
/// references and keeps the result as one immutable ``EnvironmentSnapshot``. Reads go to the
/// current snapshot without contending on a lock; ``reload()`` builds a complete new snapshot
/// and swaps it in only if everything succeeded.
///
/// ```swift
/// try Environment.bootstrap(EnvironmentOptions.fromCommandLine())
/// let baseURL = Environment.shared.url("APIBaseUrl", default: URL(string: "http://localhost")!)
/// ```
public struct Environment: ConfigurationReading, Sendable {
    /// The core: the environment's own, or for ``shared`` `EnvironmentCore.shared`, which
    /// lives as long as the process. Reads borrow it (a constant of this value, or for
    /// `Environment.shared` of a global constant), so reading through `Environment.shared`, as
    /// every `Environment.shared.fetch(…)` does, writes no reference count that threads share.
    private let core: EnvironmentCore

    private init(owning core: EnvironmentCore) {
        self.core = core
    }

    // MARK: - Creating

    /// Loads configuration as `options` describe.
    ///
    /// - Throws: ``EnvironmentError`` for a missing or bad file, an unknown or disallowed
    ///   environment, a failed interpolation or a rejected validation.
    public init(options: EnvironmentOptions) throws(EnvironmentError) {
        self.init(owning: try EnvironmentCore(options: options))
    }

    /// An environment over in-memory values, for tests and for libraries that receive their
    /// configuration explicitly. Dotted keys (`Database.Host`) reach nested dictionaries.
    ///
    /// The values are the environment's defaults layer; `${...}` references are resolved as
    /// in files (without process environment variables or credentials).
    ///
    /// - Throws: ``EnvironmentError`` for a reference that cannot be resolved or a
    ///   `LogLevel` that is not a log level.
    public init(
        values: [String: SettingValue], environmentName: String = "Test", secretKeys: Set<String> = []
    ) throws(EnvironmentError) {
        self.init(owning: try EnvironmentCore(values: values, environmentName: environmentName, secretKeys: secretKeys))
    }

    /// An environment over an in-memory `Environments.plist`-shaped dictionary (`Common` and
    /// one dictionary per environment), selected, layered and checked exactly as files are.
    public init(
        environments: [String: SettingValue], options: EnvironmentOptions = EnvironmentOptions()
    ) throws(EnvironmentError) {
        self.init(owning: try EnvironmentCore(environments: environments, options: options))
    }

    // MARK: - The shared environment

    /// The program's environment.
    ///
    /// Set it up once at start with ``bootstrap(_:)``. Without that, the first read loads it
    /// from ``EnvironmentOptions/fromCommandLine(_:processEnvironment:)``; if that fails, the
    /// error is logged and `shared` holds an empty configuration (see ``lastError``), so
    /// reads return their defaults and `require` throws.
    public static let shared = Environment(owning: EnvironmentCore.shared)

    /// Loads ``shared`` with `options`. Call it once, early in `main`; calling it again
    /// replaces the configuration (observers see the change) and drops runtime overrides.
    ///
    /// - Returns: The shared environment.
    /// - Throws: ``EnvironmentError`` if the configuration cannot be loaded; `shared` is then
    ///   left as it was.
    @discardableResult
    public static func bootstrap(_ options: EnvironmentOptions) throws(EnvironmentError) -> Environment {
        try EnvironmentCore.shared.bootstrap(options)
        return shared
    }

    // MARK: - Reading

    /// The current snapshot. Hold on to it to read several values that belong together.
    public var snapshot: EnvironmentSnapshot { core.snapshot }

    /// The value at a key path in the current snapshot.
    public func value(forKey key: String) -> SettingValue? {
        core.value(forKey: key)
    }

    /// The effective value at a key path, with its source, from the current snapshot.
    public func configuredValue(forKey key: String) -> ConfiguredValue? {
        core.configuredValue(forKey: key)
    }

    /// The value at a key path and whether it is secret, from the current snapshot, without
    /// copying its source: the swift-configuration provider's hot path.
    package func valueAndSecrecy(forKey key: String) -> (value: SettingValue, isSecret: Bool)? {
        core.valueAndSecrecy(forKey: key)
    }

    /// The name of the selected environment.
    public var environmentName: String { core.environmentName }

    /// The generation of the current snapshot.
    public var generation: UInt64 { core.generation }

    /// The error that kept the lazily loaded ``shared`` environment from loading, if any.
    public var lastError: EnvironmentError? { core.lastError }

    /// The options this environment loads files with, or `nil` for an in-memory one.
    public var options: EnvironmentOptions? { core.options }

    // MARK: - Reloading

    /// Reads, merges, interpolates and validates the configuration again and, if all of that
    /// succeeds and anything changed, swaps in the new snapshot and notifies observers.
    ///
    /// Files are read and the application's `validate` runs before any lock is taken; only the
    /// swap is locked, so `validate` may read the environment. Restart-only keys keep their old
    /// value and are listed in ``EnvironmentSnapshot/pendingRestart``.
    ///
    /// - Returns: What happened: applied (with the changed keys) or unchanged.
    /// - Throws: ``EnvironmentError``; the current snapshot stays in place.
    @discardableResult
    public func reload() throws(EnvironmentError) -> ReloadOutcome {
        try core.reload()
    }

    /// Builds the configuration exactly as ``reload()`` would, without applying it.
    ///
    /// - Returns: The snapshot a reload would apply now.
    public func check() throws(EnvironmentError) -> EnvironmentSnapshot {
        try core.check()
    }

    /// Builds the configuration as ``check()`` does, with `candidates` (file contents by
    /// absolute path) read in place of the files there, or added to the drop-ins.
    package func check(candidates: [String: Data]) throws(EnvironmentError) -> EnvironmentSnapshot {
        try core.check(candidates: candidates)
    }

    /// Sets (or, with `nil`, removes) a runtime override: the top layer, not persisted.
    /// The configuration is rebuilt and validated as on a reload.
    ///
    /// `key` may be a dotted path (`Database.Host`). Where two overrides reach the same path
    /// (`Database.Host`, and `Database` set to a dictionary with a `Host`), the one set last
    /// wins; removing it uncovers the other.
    @discardableResult
    public func setOverride(_ value: SettingValue?, forKey key: String) throws(EnvironmentError) -> ReloadOutcome {
        try core.setOverride(value, forKey: key)
    }

    /// Removes every runtime override.
    @discardableResult
    public func removeAllOverrides() throws(EnvironmentError) -> ReloadOutcome {
        try core.removeAllOverrides()
    }

    // MARK: - Observing

    /// Calls `callback` after every applied change, on the thread that applied it.
    /// Changes applied by reloads that run at the same time on different threads may arrive
    /// out of order; ``EnvironmentSnapshot/generation`` tells which is newer.
    ///
    /// The environment holds `callback` until ``removeObserver(_:)``: a callback that captures
    /// an environment of its own (not ``shared``) keeps that environment alive until then.
    /// The change itself carries both snapshots, so most callbacks need not capture it.
    ///
    /// - Returns: A token; pass it to ``removeObserver(_:)`` to stop.
    @discardableResult
    public func onChange(_ callback: @escaping @Sendable (EnvironmentChange) -> Void) -> ObserverToken {
        core.onChange(callback)
    }

    /// Stops calling an observer.
    public func removeObserver(_ token: ObserverToken) {
        core.removeObserver(token)
    }

    /// Every applied change from now on, as an `AsyncSequence`. The stream ends when the
    /// consuming task is cancelled; slow consumers see every change (unbounded buffer).
    public func changes() -> AsyncStream<EnvironmentChange> {
        core.changes()
    }
}

/// Identifies an observer registered with ``Environment/onChange(_:)``.
public struct ObserverToken: Sendable, Hashable {
    let rawValue: UInt64
}

/// An applied configuration change.
public struct EnvironmentChange: Sendable {
    /// The snapshot before the change.
    public var previous: EnvironmentSnapshot
    /// The snapshot now in place.
    public var current: EnvironmentSnapshot
    /// The leaf keys whose values changed, added or removed.
    public var changedKeys: [String]
}

/// What a reload did.
public enum ReloadOutcome: Sendable {
    /// A new snapshot was swapped in.
    case applied(EnvironmentChange)
    /// The new configuration equals the current one: nothing was swapped, nobody notified.
    case unchanged(EnvironmentSnapshot)

    /// The snapshot in place after the reload.
    public var snapshot: EnvironmentSnapshot {
        switch self {
        case .applied(let change): change.current
        case .unchanged(let snapshot): snapshot
        }
    }
}
