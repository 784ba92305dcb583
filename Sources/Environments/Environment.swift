import Foundation
import Logging
import Synchronization

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
public final class Environment: ConfigurationReading, Sendable {
    /// What a snapshot is built from.
    private struct Origin {
        var options: EnvironmentOptions
        /// `false` for an in-memory environment: the options' built-in configuration alone.
        var readsFiles: Bool
    }

    private struct WriterState {
        /// `nil` only for ``shared`` before its first use or ``bootstrap(_:)``.
        var origin: Origin?
        var overrides: [String: SettingValue] = [:]
        var observers: [UInt64: @Sendable (EnvironmentChange) -> Void] = [:]
        var nextObserver: UInt64 = 0
        var lastError: EnvironmentError?
        /// Counts changes of the origin, the overrides and the snapshot: a rebuild swaps its
        /// result in only if nothing changed while it read and validated.
        var revision: UInt64 = 0
    }

    private let store: SnapshotStore
    private let state: Mutex<WriterState>

    // MARK: - Creating

    /// Loads configuration as `options` describe.
    ///
    /// - Throws: ``EnvironmentError`` for a missing or bad file, an unknown or disallowed
    ///   environment, a failed interpolation or a rejected validation.
    public convenience init(options: EnvironmentOptions) throws(EnvironmentError) {
        try self.init(origin: Origin(options: options, readsFiles: true))
    }

    /// An environment over in-memory values, for tests and for libraries that receive their
    /// configuration explicitly. Dotted keys (`Database.Host`) reach nested dictionaries.
    ///
    /// The values are the environment's defaults layer; `${...}` references are resolved as
    /// in files (without process environment variables or credentials).
    ///
    /// - Throws: ``EnvironmentError`` for a reference that cannot be resolved or a
    ///   `LogLevel` that is not a log level.
    public convenience init(
        values: [String: SettingValue], environmentName: String = "Test", secretKeys: Set<String> = []
    ) throws(EnvironmentError) {
        let options = EnvironmentOptions(
            environment: environmentName, build: BuildInfo(defaultEnvironment: environmentName), defaults: values,
            builtInConfiguration: [environmentName: .dictionary([:])], processEnvironment: [:],
            secretKeys: secretKeys)
        try self.init(origin: Origin(options: options, readsFiles: false))
    }

    /// An environment over an in-memory `Environments.plist`-shaped dictionary (`Common` and
    /// one dictionary per environment), selected, layered and checked exactly as files are.
    public convenience init(
        environments: [String: SettingValue], options: EnvironmentOptions = EnvironmentOptions()
    ) throws(EnvironmentError) {
        var options = options
        options.builtInConfiguration = environments
        try self.init(origin: Origin(options: options, readsFiles: false))
    }

    private init(origin: Origin) throws(EnvironmentError) {
        let builder = SnapshotBuilder(options: origin.options, overrides: [:], readsFiles: origin.readsFiles)
        store = SnapshotStore(try builder.build(previous: nil, generation: 1))
        state = Mutex(WriterState(origin: origin))
    }

    /// The shared environment before it is loaded.
    private init() {
        store = SnapshotStore()
        state = Mutex(WriterState())
    }

    // MARK: - The shared environment

    /// The program's environment.
    ///
    /// Set it up once at start with ``bootstrap(_:)``. Without that, the first read loads it
    /// from ``EnvironmentOptions/fromCommandLine(_:processEnvironment:)``; if that fails, the
    /// error is logged and `shared` holds an empty configuration (see ``lastError``), so
    /// reads return their defaults and `require` throws.
    public static let shared = Environment()

    /// Serializes the first load of ``shared``; reads do not take it.
    private static let firstLoad = Mutex<Void>(())

    /// Loads ``shared`` with `options`. Call it once, early in `main`; calling it again
    /// replaces the configuration (observers see the change) and drops runtime overrides.
    ///
    /// - Returns: The shared environment.
    /// - Throws: ``EnvironmentError`` if the configuration cannot be loaded; `shared` is then
    ///   left as it was.
    @discardableResult
    public static func bootstrap(_ options: EnvironmentOptions) throws(EnvironmentError) -> Environment {
        try shared.rebuild(startingOver: true) { inputs in
            inputs.origin = Origin(options: options, readsFiles: true)
            inputs.overrides = [:]
        }
        return shared
    }

    /// The current snapshot of ``shared`` before anything was loaded: loads it from the
    /// command line (outside every lock readers or writers take).
    private func loadFromCommandLine() -> EnvironmentSnapshot {
        Environment.firstLoad.withLock { _ in
            if let snapshot = store.load() { return snapshot }
            let options = EnvironmentOptions.fromCommandLine()
            let snapshot: EnvironmentSnapshot
            var failure: EnvironmentError?
            do throws(EnvironmentError) {
                snapshot = try SnapshotBuilder(options: options, overrides: [:], readsFiles: true)
                    .build(previous: nil, generation: 1)
            } catch {
                Logger(label: "Environments").error("cannot load configuration", metadata: ["error": "\(error)"])
                failure = error
                snapshot = EnvironmentSnapshot(
                    environmentName: options.environment ?? options.build.defaultEnvironment, generation: 1, tree: [:],
                    files: [], location: ConfigurationLocation(options: options), secretKeys: [],
                    restartRequiredKeys: [], pendingRestart: [:])
            }
            state.withLock { state in
                // A bootstrap that won the race keeps its configuration.
                guard state.origin == nil else { return }
                state.origin = Origin(options: options, readsFiles: true)
                state.lastError = failure
                state.revision &+= 1
                _ = store.publishIfEmpty(snapshot)
            }
            return store.load()!
        }
    }

    // MARK: - Reading

    /// Runs `body` on the current snapshot.
    @inline(__always)
    private func read<Result>(_ body: (EnvironmentSnapshot) -> Result) -> Result {
        if let result = store.read(body) { return result }
        return body(loadFromCommandLine())
    }

    /// The current snapshot. Hold on to it to read several values that belong together.
    public var snapshot: EnvironmentSnapshot { store.load() ?? loadFromCommandLine() }

    /// The value at a key path in the current snapshot.
    public func value(forKey key: String) -> SettingValue? {
        read { $0.table[key]?.value }
    }

    /// The effective value at a key path, with its source, from the current snapshot.
    public func configuredValue(forKey key: String) -> ConfiguredValue? {
        read { snapshot in snapshot.table[key].map(snapshot.configuredValue) }
    }

    /// The value at a key path and whether it is secret, from the current snapshot, without
    /// copying its source: the swift-configuration provider's hot path.
    package func valueAndSecrecy(forKey key: String) -> (value: SettingValue, isSecret: Bool)? {
        read { $0.table[key].map { ($0.value, $0.isSecret) } }
    }

    /// The name of the selected environment.
    public var environmentName: String { read { $0.environmentName } }

    /// The generation of the current snapshot.
    public var generation: UInt64 { read { $0.generation } }

    /// The error that kept the lazily loaded ``shared`` environment from loading, if any.
    public var lastError: EnvironmentError? { state.withLock { $0.lastError } }

    /// The options this environment loads files with, or `nil` for an in-memory one.
    public var options: EnvironmentOptions? {
        state.withLock { $0.origin.flatMap { $0.readsFiles ? $0.options : nil } }
    }

    // MARK: - Reloading

    /// Reads, merges, interpolates and validates the configuration again and, if all of that
    /// succeeds and anything changed, swaps in the new snapshot and notifies observers.
    ///
    /// Files are read and the application's `validate` runs before any lock is taken; only the
    /// swap is locked. Restart-only keys keep their old value and are listed in
    /// ``EnvironmentSnapshot/pendingRestart``.
    ///
    /// - Returns: What happened: applied (with the changed keys) or unchanged.
    /// - Throws: ``EnvironmentError``; the current snapshot stays in place.
    @discardableResult
    public func reload() throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { _ in }
    }

    /// Builds the configuration exactly as ``reload()`` would, without applying it.
    ///
    /// - Returns: The snapshot a reload would apply now.
    public func check() throws(EnvironmentError) -> EnvironmentSnapshot {
        let current = snapshot
        let (origin, overrides) = state.withLock { ($0.origin, $0.overrides) }
        guard let origin else { return current }
        return try SnapshotBuilder(options: origin.options, overrides: overrides, readsFiles: origin.readsFiles)
            .build(previous: current, generation: current.generation + 1)
    }

    /// Sets (or, with `nil`, removes) a runtime override: the top layer, not persisted.
    /// The configuration is rebuilt and validated as on a reload.
    @discardableResult
    public func setOverride(_ value: SettingValue?, forKey key: String) throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { $0.overrides[key] = value }
    }

    /// Removes every runtime override.
    @discardableResult
    public func removeAllOverrides() throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { $0.overrides.removeAll() }
    }

    private struct Inputs {
        var origin: Origin?
        var overrides: [String: SettingValue]
    }

    /// Builds a snapshot from the inputs as `change` leaves them, outside every lock, then
    /// swaps it in if nothing changed meanwhile; otherwise builds again from the new state.
    ///
    /// - Parameter startingOver: A new origin: no restart-only key keeps its old value.
    private func rebuild(startingOver: Bool = false, _ change: (inout Inputs) -> Void) throws(EnvironmentError)
        -> ReloadOutcome
    {
        while true {
            let (inputs, revision) = state.withLock { state in
                (Inputs(origin: state.origin, overrides: state.overrides), state.revision)
            }
            var next = inputs
            change(&next)
            guard let origin = next.origin else {
                // `shared`, never read yet: load it first, then apply the change to it.
                _ = loadFromCommandLine()
                continue
            }
            let previous = store.load()
            let built = try SnapshotBuilder(options: origin.options, overrides: next.overrides, readsFiles: origin.readsFiles)
                .build(previous: startingOver ? nil : previous, generation: (previous?.generation ?? 0) + 1)
            let unchanged = previous.map { built.hasSameContent(as: $0) } ?? false
            let swapped: (ReloadOutcome, [@Sendable (EnvironmentChange) -> Void])? = state.withLock { state in
                guard state.revision == revision else { return nil }
                state.revision &+= 1
                state.origin = next.origin
                state.overrides = next.overrides
                state.lastError = nil
                guard let previous else {
                    // The first snapshot of `shared` (a bootstrap before any read): nobody to tell.
                    store.publish(built)
                    return (.unchanged(built), [])
                }
                if unchanged { return (.unchanged(previous), []) }
                store.publish(built)
                let event = EnvironmentChange(previous: previous, current: built, changedKeys: built.changedKeys(since: previous))
                return (.applied(event), Array(state.observers.values))
            }
            guard let (outcome, observers) = swapped else { continue }
            if case .applied(let event) = outcome {
                for observer in observers { observer(event) }
            }
            return outcome
        }
    }

    // MARK: - Observing

    /// Calls `callback` after every applied change, on the thread that applied it.
    /// Changes applied by reloads that run at the same time on different threads may arrive
    /// out of order; ``EnvironmentSnapshot/generation`` tells which is newer.
    ///
    /// - Returns: A token; pass it to ``removeObserver(_:)`` to stop.
    @discardableResult
    public func onChange(_ callback: @escaping @Sendable (EnvironmentChange) -> Void) -> ObserverToken {
        state.withLock { state in
            state.nextObserver += 1
            state.observers[state.nextObserver] = callback
            return ObserverToken(rawValue: state.nextObserver)
        }
    }

    /// Stops calling an observer.
    public func removeObserver(_ token: ObserverToken) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.rawValue) }
    }

    /// Every applied change from now on, as an `AsyncSequence`. The stream ends when the
    /// consuming task is cancelled; slow consumers see every change (unbounded buffer).
    public func changes() -> AsyncStream<EnvironmentChange> {
        let (stream, continuation) = AsyncStream<EnvironmentChange>.makeStream()
        let token = onChange { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        return stream
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
