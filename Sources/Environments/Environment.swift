import Locking
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Per-environment configuration for a program: `Environment.shared.fetch("APIBaseUrl")`.
///
/// An environment loads `Environments.plist` (and its drop-ins), selects one environment
/// section, layers it over `Common` and the compiled-in defaults, interpolates `${...}`
/// references and keeps the result as one immutable ``EnvironmentSnapshot``. Reads go to the
/// current snapshot without taking a lock; ``reload()`` builds a complete new snapshot and
/// swaps it in only if everything succeeded.
///
/// ```swift
/// var options = EnvironmentOptions()
/// options.environment = "Staging"  // from your own --environment flag, say
/// try Environment.bootstrap(options)
/// let baseURL = Environment.shared.get("APIBaseUrl", default: URL(string: "http://localhost")!)
/// ```
///
/// Changes are applied one at a time: a reload, an override or the bootstrap waits for the one
/// in progress. Readers never wait for them.
public final class Environment: ConfigurationReading, Sendable {
    /// What a snapshot is built from.
    struct Origin {
        var options: EnvironmentOptions
        /// `false` for an in-memory environment: the options' built-in configuration alone.
        var readsFiles: Bool
    }

    /// What changes build snapshots from; guarded by ``writer``, which every change holds from
    /// reading its inputs to publishing its snapshot.
    struct WriterState {
        /// `nil` only for ``shared`` before its first read or ``bootstrap(_:)``.
        var origin: Origin?
        /// In the order they were set: a later one wins where two reach the same path.
        var overrides: [RuntimeOverride] = []
        /// Whether ``bootstrap(_:)`` succeeded (it may only once).
        var isBootstrapped = false
    }

    /// What ``options`` and ``lastError`` answer: set with each publish, under its own lock so
    /// that `validate` (which runs while a change holds ``writer``) may ask.
    struct Status {
        var options: EnvironmentOptions?
        var lastError: EnvironmentError?
    }

    /// This environment's parts; `nil` for ``shared``, whose parts are ``EnvironmentParts/shared``,
    /// so that `shared` holds only a constant and its reference count is never written (see
    /// ``EnvironmentParts``).
    private let ownParts: EnvironmentParts?

    /// Runs `body` with this environment's parts, retaining nothing: the read path's way to them.
    @inline(__always)
    func withParts<Result>(_ body: (EnvironmentParts) -> Result) -> Result {
        // Optional chaining borrows the parts; `if let` would copy (retain) them.
        if let result = ownParts?.run(body) { return result }
        return body(EnvironmentParts.shared)
    }

    /// This environment's parts, for the paths that change it (a read uses ``withParts(_:)``).
    var parts: EnvironmentParts { ownParts ?? EnvironmentParts.shared }
    var store: SnapshotStore { parts.store }
    var writer: Locked<WriterState> { parts.writer }
    var status: Locked<Status> { parts.status }
    var observers: ObserverQueue { parts.observers }

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
    package convenience init(
        environments: [String: SettingValue], options: EnvironmentOptions = EnvironmentOptions()
    ) throws(EnvironmentError) {
        var options = options
        options.builtInConfiguration = environments
        try self.init(origin: Origin(options: options, readsFiles: false))
    }

    private init(origin: Origin) throws(EnvironmentError) {
        // Once, here: a relative directory means the one it meant at start, whatever follows.
        let origin = Origin(options: try origin.options.anchored(), readsFiles: origin.readsFiles)
        let builder = SnapshotBuilder(options: origin.options, overrides: [], readsFiles: origin.readsFiles)
        ownParts = EnvironmentParts(
            store: SnapshotStore(try builder.build(previous: nil, generation: 1)),
            writer: WriterState(origin: origin), status: Status(options: origin.readsFiles ? origin.options : nil))
    }

    /// The shared environment: its parts are ``EnvironmentParts/shared``, not yet loaded.
    private init() {
        ownParts = nil
    }

    // MARK: - The shared environment

    /// The program's environment.
    ///
    /// Set it up once, early in `main`, with ``bootstrap(_:)``. A program that reads it without
    /// that gets the conventional ``EnvironmentOptions/init(applicationName:environment:configDirectory:build:builtInConfiguration:validate:)``
    /// defaults on its first read (no command-line flags: the executable parses those); if
    /// they do not load, the error is logged and `shared` holds an empty configuration (see
    /// ``lastError``), so reads return their defaults and `require` throws.
    public static let shared = Environment()

    /// Loads ``shared`` with `options`, once: as swift-log's `LoggingSystem.bootstrap`, a
    /// program bootstraps its environment once, early in `main`, from the flags it parsed.
    ///
    /// If ``shared`` was read before (and so loaded its defaults), the bootstrapped
    /// configuration replaces that one and observers see the change.
    ///
    /// - Returns: The shared environment.
    /// - Throws: ``EnvironmentError`` if the configuration cannot be loaded (`shared` is left
    ///   as it was, and a later bootstrap may try again), or with code
    ///   ``EnvironmentError/Code/alreadyBootstrapped`` if an earlier bootstrap succeeded.
    @discardableResult
    public static func bootstrap(_ options: EnvironmentOptions) throws(EnvironmentError) -> Environment {
        let options = try options.anchored()
        _ = try shared.apply(startingOver: true) { state throws(EnvironmentError) in
            guard !state.isBootstrapped else {
                throw EnvironmentError(
                    .alreadyBootstrapped, "the shared environment was bootstrapped already",
                    hint:
                        "call Environment.bootstrap(_:) once, early in main; to read the files again call reload(), and for another configuration make an Environment(options:) of its own"
                )
            }
            state.isBootstrapped = true
            state.origin = Origin(options: options, readsFiles: true)
            state.overrides = []
        }
        return shared
    }

    // MARK: - Reading

    /// Runs `body` on the current snapshot.
    @inline(__always)
    private func read<Result>(_ body: (EnvironmentSnapshot) -> Result) -> Result {
        if let result = withParts({ $0.store.read(body) }) { return result }
        return body(loadDefaults())
    }

    /// The current snapshot. Hold on to it to read several values that belong together.
    public var snapshot: EnvironmentSnapshot {
        // From this thread's cache, not under the store's lock: reading threads never
        // wait for one another or for a writer. Returning it retains it.
        withParts { $0.store.read { $0 } } ?? loadDefaults()
    }

    /// The value at a key path as a plain Swift value (`String`, `Int`, `Double`, `Bool`,
    /// `Date`, `Data`, `[Any]`, `[String: Any]`), or `nil`: ``ConfigurationReading/fetch(_:)``,
    /// called directly on the environment rather than through the protocol, so that
    /// `Environment.shared.fetch(_:)` is one lookup and no generic code.
    public func fetch(_ key: String) -> Any? {
        guard let entry = withParts({ $0.store.entry(forKey: key) }) else {
            return loadDefaults().value(forKey: key)?.movedIntoAny()
        }
        return entry?.value.movedIntoAny()
    }

    /// The value at a key path in the current snapshot.
    public func value(forKey key: String) -> SettingValue? {
        if let entry = withParts({ $0.store.entry(forKey: key) }) { return entry?.value }
        return loadDefaults().entry(forKey: key)?.value
    }

    /// The value at a key path and whether it is secret, from the current snapshot, without
    /// copying its source: the swift-configuration provider's hot path.
    package func valueAndSecrecy(forKey key: String) -> (value: SettingValue, isSecret: Bool)? {
        let entry = withParts { $0.store.entry(forKey: key) } ?? loadDefaults().entry(forKey: key)
        return entry.map { ($0.value, $0.isSecret) }
    }

    /// The name of the selected environment: the current snapshot's.
    package var environmentName: String { read { $0.environmentName } }

    /// The generation of the current snapshot.
    package var generation: UInt64 { read { $0.generation } }

    /// The error that kept the lazily loaded ``shared`` environment from loading, if any.
    public var lastError: EnvironmentError? { status.withLock { $0.lastError } }

    /// The options this environment loads files with, or `nil` for an in-memory one.
    package var options: EnvironmentOptions? { status.withLock { $0.options } }

    /// How many threads' caches hold one of this environment's snapshots: for tests.
    package var threadCachesHoldingViews: Int { store.threadCachesHoldingViews }
}
