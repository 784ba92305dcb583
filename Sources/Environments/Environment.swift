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
    private struct WriterState {
        var options: EnvironmentOptions?
        var overrides: [String: SettingValue] = [:]
        var observers: [UInt64: @Sendable (EnvironmentChange) -> Void] = [:]
        var nextObserver: UInt64 = 0
        var lastError: EnvironmentError?
        /// An in-memory environment's values before interpolation: overrides go on top of these.
        var inMemoryTree: [String: SettingNode] = [:]
    }

    private let store: SnapshotStore
    private let state: Mutex<WriterState>
    private let logger: Logger

    // MARK: - Creating

    /// Loads configuration as `options` describe.
    ///
    /// - Throws: ``EnvironmentError`` for a missing or bad file, an unknown or disallowed
    ///   environment, a failed interpolation or a rejected validation.
    public init(options: EnvironmentOptions, logger: Logger = Logger(label: "Environments")) throws(EnvironmentError) {
        let builder = SnapshotBuilder(options: options, overrides: [:])
        let snapshot = try builder.build(previous: nil, generation: 1)
        self.store = SnapshotStore(snapshot)
        self.state = Mutex(WriterState(options: options))
        self.logger = logger
    }

    /// An environment over in-memory values, for tests and for libraries that receive their
    /// configuration explicitly. Dotted keys (`Database.Host`) reach nested dictionaries.
    public init(
        values: [String: SettingValue], environmentName: String = "Test", secretKeys: Set<String> = [],
        logger: Logger = Logger(label: "Environments")
    ) {
        var tree: [String: SettingNode] = [:]
        SettingTree.merge(SettingTree.expandingDottedKeys(values), into: &tree, source: .defaults)
        let snapshot = Environment.inMemorySnapshot(
            tree, environmentName: environmentName, generation: 1, secretKeys: secretKeys, logger: logger)
        self.store = SnapshotStore(snapshot)
        self.state = Mutex(WriterState(options: nil, inMemoryTree: tree))
        self.logger = logger
    }

    /// A snapshot of in-memory values: interpolated where possible (a reference that cannot be
    /// resolved stays as written, with a warning) and with secrets marked.
    private static func inMemorySnapshot(
        _ tree: [String: SettingNode], environmentName: String, generation: UInt64, secretKeys: Set<String>,
        logger: Logger
    ) -> EnvironmentSnapshot {
        var interpolator = Interpolator(
            tree: tree, environmentName: environmentName, processEnvironment: [:], secretPaths: secretKeys)
        let resolved: [String: SettingNode]
        do {
            resolved = try interpolator.resolve(tree)
        } catch {
            logger.warning(
                "in-memory configuration keeps '${' references it cannot resolve", metadata: ["error": "\(error)"])
            resolved = Interpolator.markingSecrets(tree, secretPaths: secretKeys)
        }
        return EnvironmentSnapshot(
            environmentName: environmentName, generation: generation, tree: resolved, files: [], location: nil,
            secretKeys: secretKeys, restartRequiredKeys: [], pendingRestart: [:])
    }

    /// An environment over an in-memory `Environments.plist`-shaped dictionary (`Common` and
    /// one dictionary per environment), selected and layered exactly as files are.
    public convenience init(
        environments: [String: SettingValue], options: EnvironmentOptions = EnvironmentOptions(),
        logger: Logger = Logger(label: "Environments")
    ) throws(EnvironmentError) {
        var options = options
        options.builtInConfiguration = environments
        options.inMemoryOnly = true
        try self.init(options: options, logger: logger)
    }

    // MARK: - The shared environment

    /// Serializes setting up ``shared``; reads do not take it.
    private static let sharedSetup = Mutex<Void>(())
    /// The shared environment's address, published once set. Shared environments are never
    /// deallocated (a replaced one stays alive), so readers can use it without locking.
    private static let sharedAddress = Atomic<UInt>(0)

    /// The program's environment.
    ///
    /// Set it up once at start with ``bootstrap(_:)``. Without that, the first use loads it
    /// from ``EnvironmentOptions/fromCommandLine(_:processEnvironment:)``; if that fails, the
    /// error is logged and `shared` holds an empty configuration (see ``lastError``), so
    /// reads return their defaults and `require` throws.
    public static var shared: Environment {
        let address = sharedAddress.load(ordering: .acquiring)
        if address != 0, let pointer = UnsafeRawPointer(bitPattern: address) {
            return Unmanaged<Environment>.fromOpaque(pointer).takeUnretainedValue()
        }
        return sharedSetup.withLock { _ in
            let address = sharedAddress.load(ordering: .acquiring)
            if address != 0, let pointer = UnsafeRawPointer(bitPattern: address) {
                return Unmanaged<Environment>.fromOpaque(pointer).takeUnretainedValue()
            }
            let options = EnvironmentOptions.fromCommandLine()
            let environment: Environment
            do throws(EnvironmentError) {
                environment = try Environment(options: options)
            } catch {
                Logger(label: "Environments").error("cannot load configuration", metadata: ["error": "\(error)"])
                environment = Environment(
                    values: [:], environmentName: options.environment ?? options.build.defaultEnvironment)
                environment.state.withLock {
                    $0.options = options
                    $0.lastError = error
                }
            }
            publishShared(environment)
            return environment
        }
    }

    private static func publishShared(_ environment: Environment) {
        // Kept forever, so readers need no reference of their own; immortal, so that the
        // retain and release around `Environment.shared.fetch(…)` do not make threads contend.
        Immortal.make(environment)
        let address = UInt(bitPattern: Unmanaged.passUnretained(environment).toOpaque())
        sharedAddress.store(address, ordering: .releasing)
    }

    /// Loads the shared environment with `options`. Call it once, early in `main`.
    ///
    /// - Returns: The new shared environment.
    /// - Throws: ``EnvironmentError`` if the configuration cannot be loaded; `shared` is then
    ///   left as it was.
    @discardableResult
    public static func bootstrap(_ options: EnvironmentOptions, logger: Logger = Logger(label: "Environments"))
        throws(EnvironmentError) -> Environment
    {
        let environment = try Environment(options: options, logger: logger)
        sharedSetup.withLock { _ in publishShared(environment) }
        return environment
    }

    /// Makes `environment` the shared one, for programs that build their own.
    public static func bootstrap(_ environment: Environment) {
        sharedSetup.withLock { _ in publishShared(environment) }
    }

    // MARK: - Reading

    /// The current snapshot. Hold on to it to read several values that belong together.
    public var snapshot: EnvironmentSnapshot { store.load() }

    /// The current snapshot (``ConfigurationReading``).
    public var currentSnapshot: EnvironmentSnapshot { store.load() }

    /// The effective value at a key path, with its source, from the current snapshot.
    @inline(__always)
    public func configuredValue(forKey key: String) -> ConfiguredValue? {
        store.withCurrent { $0.entries[key] }
    }

    /// The value at a key path and whether it is secret, from the current snapshot, without
    /// copying its source: the swift-configuration provider's hot path.
    @inline(__always)
    package func valueAndSecrecy(forKey key: String) -> (value: SettingValue, isSecret: Bool)? {
        store.withCurrent { snapshot in
            guard let value = snapshot.valuesByKey[key] else { return nil }
            return (value, !snapshot.secretPaths.isEmpty && snapshot.secretPaths.contains(key))
        }
    }

    /// The raw value at a key path from the current snapshot (see ``ConfigurationReading/fetch(_:)``).
    @inline(__always)
    public func fetch(_ key: String) -> Any? {
        store.withCurrent { $0.anyValuesByKey[key] }
    }

    /// A string from the current snapshot, or `defaultValue`.
    @inline(__always)
    public func string(_ key: String, default defaultValue: String) -> String {
        // The common case in one lookup; anything else (missing, or converted) the general way.
        if case .string(let text)? = store.withCurrent({ $0.valuesByKey[key] }) { return text }
        return value(key, default: defaultValue)
    }

    /// The name of the selected environment.
    public var environmentName: String { store.withCurrent { $0.environmentName } }

    /// The generation of the current snapshot.
    public var generation: UInt64 { store.withCurrent { $0.generation } }

    /// The error that kept the lazily created ``shared`` environment from loading, if any.
    public var lastError: EnvironmentError? { state.withLock { $0.lastError } }

    /// The options this environment loads with, or `nil` for an in-memory one.
    public var options: EnvironmentOptions? { state.withLock { $0.options } }

    // MARK: - Reloading

    /// Reads, merges, interpolates and validates the configuration again and, if all of that
    /// succeeds and anything changed, swaps in the new snapshot and notifies observers.
    ///
    /// Restart-only keys keep their old value and are listed in
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
        let (options, overrides) = state.withLock { ($0.options, $0.overrides) }
        guard let options else { return snapshot }
        let builder = SnapshotBuilder(options: options, overrides: overrides)
        return try builder.build(previous: snapshot, generation: snapshot.generation + 1)
    }

    /// Sets (or, with `nil`, removes) a runtime override: the top layer, not persisted.
    /// The configuration is rebuilt and validated as on a reload.
    @discardableResult
    public func setOverride(_ value: SettingValue?, forKey key: String) throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { $0[key] = value }
    }

    /// Removes every runtime override.
    @discardableResult
    public func removeAllOverrides() throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { $0.removeAll() }
    }

    private func rebuild(_ change: (inout [String: SettingValue]) -> Void) throws(EnvironmentError) -> ReloadOutcome {
        let result: Result<(ReloadOutcome, [@Sendable (EnvironmentChange) -> Void]), EnvironmentError> =
            state.withLock { state in
                var overrides = state.overrides
                change(&overrides)
                let previous = store.load()
                let built: EnvironmentSnapshot
                if let options = state.options {
                    let builder = SnapshotBuilder(options: options, overrides: overrides)
                    do throws(EnvironmentError) {
                        built = try builder.build(previous: previous, generation: previous.generation + 1)
                    } catch {
                        return .failure(error)
                    }
                } else {
                    // In-memory: overrides go on top of the original values (so that removing one
                    // restores them), interpolated and marked secret as in `init(values:)`.
                    var tree = state.inMemoryTree
                    SettingTree.merge(SettingTree.expandingDottedKeys(overrides), into: &tree, source: .override)
                    built = Environment.inMemorySnapshot(
                        tree, environmentName: previous.environmentName, generation: previous.generation + 1,
                        secretKeys: previous.secretKeys, logger: logger)
                }
                state.overrides = overrides
                state.lastError = nil
                if built.hasSameContent(as: previous) {
                    return .success((.unchanged(previous), []))
                }
                let changed = built.changedKeys(since: previous)
                store.publish(built)
                let event = EnvironmentChange(previous: previous, current: built, changedKeys: changed)
                return .success((.applied(event), Array(state.observers.values)))
            }
        switch result {
        case .failure(let error):
            throw error
        case .success(let (outcome, observers)):
            if case .applied(let change) = outcome {
                for observer in observers { observer(change) }
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
