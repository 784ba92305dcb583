import Foundation
import Logging

/// The state behind an ``Environment``: its snapshots, how they are built, its observers.
final class EnvironmentCore: Sendable {
    /// What a snapshot is built from.
    private struct Origin {
        var options: EnvironmentOptions
        /// `false` for an in-memory environment: the options' built-in configuration alone.
        var readsFiles: Bool
    }

    private struct WriterState {
        /// `nil` only for ``shared`` before its first use or ``bootstrap(_:)``.
        var origin: Origin?
        /// In the order they were set: a later one wins where two reach the same path.
        var overrides: [RuntimeOverride] = []
        var observers: [UInt64: @Sendable (EnvironmentChange) -> Void] = [:]
        var nextObserver: UInt64 = 0
        var lastError: EnvironmentError?
        /// Counts changes of the origin, the overrides and the snapshot: a rebuild swaps its
        /// result in only if nothing changed while it read and validated.
        var revision: UInt64 = 0
    }

    private let store: SnapshotStore
    private let state: Locked<WriterState>

    // MARK: - Creating

    /// Loads configuration as `options` describe.
    ///
    /// - Throws: ``EnvironmentError`` for a missing or bad file, an unknown or disallowed
    ///   environment, a failed interpolation or a rejected validation.
    convenience init(options: EnvironmentOptions) throws(EnvironmentError) {
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
    convenience init(
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
    convenience init(
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
        store = SnapshotStore(try builder.build(previous: nil, generation: 1))
        state = Locked(WriterState(origin: origin))
    }

    /// The shared environment before it is loaded.
    private init() {
        store = SnapshotStore()
        state = Locked(WriterState())
    }

    // MARK: - The shared environment

    /// The program's environment.
    ///
    /// Set it up once at start with ``bootstrap(_:)``. Without that, the first read loads it
    /// from ``EnvironmentOptions/fromCommandLine(_:processEnvironment:)``; if that fails, the
    /// error is logged and `shared` holds an empty configuration (see ``lastError``), so
    /// reads return their defaults and `require` throws.
    static let shared = EnvironmentCore()

    /// Serializes the first load of ``shared``; reads do not take it.
    private static let firstLoad = Locked<Void>(())

    /// Loads ``shared`` with `options`. Call it once, early in `main`; calling it again
    /// replaces the configuration (observers see the change) and drops runtime overrides.
    ///
    /// - Throws: ``EnvironmentError`` if the configuration cannot be loaded; the core is then
    ///   left as it was.
    func bootstrap(_ options: EnvironmentOptions) throws(EnvironmentError) {
        let options = try options.anchored()
        _ = try rebuild(startingOver: true) { inputs in
            inputs.origin = Origin(options: options, readsFiles: true)
            inputs.overrides = []
        }
    }

    /// The current snapshot of ``shared`` before anything was loaded: loads it from the
    /// command line (outside every lock readers or writers take).
    private func loadFromCommandLine() -> EnvironmentSnapshot {
        EnvironmentCore.firstLoad.withLock { _ in
            if let snapshot = store.load() { return snapshot }
            let options = EnvironmentOptions.fromCommandLine().anchoringPaths()
            let snapshot: EnvironmentSnapshot
            var failure: EnvironmentError?
            do throws(EnvironmentError) {
                try options.checkNames()
                snapshot = try SnapshotBuilder(options: options, overrides: [], readsFiles: true)
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
    var snapshot: EnvironmentSnapshot {
        // From this thread's cached view, not under the store's lock: reading threads never
        // wait for one another or for a writer. Returning it retains it.
        store.read { $0 } ?? loadFromCommandLine()
    }

    /// The value at a key path in the current snapshot.
    func value(forKey key: String) -> SettingValue? {
        if let entry = store.entry(forKey: key) { return entry?.value }
        return loadFromCommandLine().table[key]?.value
    }

    /// The effective value at a key path, with its source, from the current snapshot.
    func configuredValue(forKey key: String) -> ConfiguredValue? {
        read { snapshot in snapshot.table[key].map(snapshot.configuredValue) }
    }

    /// The value at a key path and whether it is secret, from the current snapshot, without
    /// copying its source: the swift-configuration provider's hot path.
    func valueAndSecrecy(forKey key: String) -> (value: SettingValue, isSecret: Bool)? {
        read { $0.table[key].map { ($0.value, $0.isSecret) } }
    }

    /// The name of the selected environment.
    var environmentName: String { read { $0.environmentName } }

    /// The generation of the current snapshot.
    var generation: UInt64 { read { $0.generation } }

    /// The error that kept the lazily loaded ``shared`` environment from loading, if any.
    var lastError: EnvironmentError? { state.withLock { $0.lastError } }

    /// The options this environment loads files with, or `nil` for an in-memory one.
    var options: EnvironmentOptions? {
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
    func reload() throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { _ in }
    }

    /// Builds the configuration exactly as ``reload()`` would, without applying it.
    ///
    /// - Returns: The snapshot a reload would apply now.
    func check(candidates: [String: Data] = [:]) throws(EnvironmentError) -> EnvironmentSnapshot {
        let current = snapshot
        let (origin, overrides) = state.withLock { ($0.origin, $0.overrides) }
        guard let origin else { return current }
        var options = origin.options
        options.candidateDocuments = candidates
        return try SnapshotBuilder(options: options, overrides: overrides, readsFiles: origin.readsFiles)
            .build(previous: current, generation: current.generation + 1)
    }

    /// Sets (or, with `nil`, removes) a runtime override: the top layer, not persisted.
    /// The configuration is rebuilt and validated as on a reload.
    @discardableResult
    func setOverride(_ value: SettingValue?, forKey key: String) throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { $0.overrides.set(value, forKey: key) }
    }

    /// Removes every runtime override.
    @discardableResult
    func removeAllOverrides() throws(EnvironmentError) -> ReloadOutcome {
        try rebuild { $0.overrides.removeAll() }
    }

    private struct Inputs {
        var origin: Origin?
        var overrides: [RuntimeOverride]
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
            let built = try SnapshotBuilder(
                options: origin.options, overrides: next.overrides, readsFiles: origin.readsFiles
            )
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
                let event = EnvironmentChange(
                    previous: previous, current: built, changedKeys: built.changedKeys(since: previous))
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
    func onChange(_ callback: @escaping @Sendable (EnvironmentChange) -> Void) -> ObserverToken {
        state.withLock { state in
            state.nextObserver += 1
            state.observers[state.nextObserver] = callback
            return ObserverToken(rawValue: state.nextObserver)
        }
    }

    /// Stops calling an observer.
    func removeObserver(_ token: ObserverToken) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.rawValue) }
    }

    /// Every applied change from now on, as an `AsyncSequence`. The stream ends when the
    /// consuming task is cancelled; slow consumers see every change (unbounded buffer).
    func changes() -> AsyncStream<EnvironmentChange> {
        let (stream, continuation) = AsyncStream<EnvironmentChange>.makeStream()
        let token = onChange { continuation.yield($0) }
        // Held strongly: the stream ends (and this closure is released) when its consumer lets
        // go of it or is cancelled, so the core is not kept alive beyond that. (A weak reference
        // would give the core a side table that a process-wide core never frees.)
        continuation.onTermination = { _ in self.removeObserver(token) }
        return stream
    }
}
