import Locking
import Logging
import Synchronization

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Environment {
    // MARK: - Reloading

    /// Reads, merges, interpolates and validates the configuration again and, if all of that
    /// succeeds and anything changed, swaps in the new snapshot and notifies observers.
    ///
    /// Restart-only keys keep their old value and are listed in
    /// ``EnvironmentSnapshot/pendingRestart``. A change that another thread is applying
    /// (a reload, an override) finishes first; readers meanwhile read the current snapshot.
    ///
    /// - Returns: What happened: applied (with the changed keys) or unchanged.
    /// - Throws: ``EnvironmentError``; the current snapshot stays in place. Called from this
    ///   environment's own ``EnvironmentOptions/validate`` (which runs inside a change), it
    ///   throws ``EnvironmentError/Code/reentrantChange`` at once rather than wait for itself.
    @discardableResult
    public func reload() throws(EnvironmentError) -> ReloadOutcome {
        try apply { _ throws(EnvironmentError) in }
    }

    /// Reloads as ``reload()`` does, for a caller that may give up on the reload while it is
    /// being built (a daemon that is stopping): once the snapshot is built and checked, and
    /// before anything is published, `gate` is called with the step that publishes it, holding
    /// the environment's writer lock; the reload takes effect only if `gate` runs that step.
    ///
    /// - Returns: What happened, or `nil` if `gate` did not publish (nothing changed).
    package func reload(
        publishingThrough gate: (_ publish: () -> ReloadOutcome) -> ReloadOutcome?
    ) throws(EnvironmentError) -> ReloadOutcome? {
        try apply(operation: "reload()", gate: gate) { _ throws(EnvironmentError) in }
    }

    /// Builds the configuration exactly as ``reload()`` would, without applying it: what
    /// `envctl check` and the control socket's `Check` answer.
    ///
    /// - Returns: The snapshot a reload would apply now.
    package func check() throws(EnvironmentError) -> EnvironmentSnapshot {
        try check(candidates: [:])
    }

    /// Builds the configuration as ``check()`` does, with `candidates` (file contents by
    /// absolute path) read in place of the files there, or added to the drop-ins.
    package func check(candidates: [String: Data]) throws(EnvironmentError) -> EnvironmentSnapshot {
        try refuseChangeFromValidate("check()")
        let current = snapshot
        let (origin, overrides) = writer.withLock { ($0.origin, $0.overrides) }
        guard let origin else { return current }
        var options = origin.options
        options.candidateDocuments = candidates
        return try SnapshotBuilder(options: options, overrides: overrides, readsFiles: origin.readsFiles)
            .build(previous: current, generation: current.generation + 1)
    }

    /// Sets (or, with `nil`, removes) a runtime override: the top layer, not persisted.
    /// The configuration is rebuilt and validated as on a reload.
    ///
    /// `key` may be a dotted path (`Database.Host`). Where two overrides reach the same path
    /// (`Database.Host`, and `Database` set to a dictionary with a `Host`), the one set last
    /// wins; removing it uncovers the other.
    @discardableResult
    public func setOverride(_ value: SettingValue?, forKey key: String) throws(EnvironmentError) -> ReloadOutcome {
        try apply { state throws(EnvironmentError) in state.overrides.set(value, forKey: key) }
    }

    /// Removes every runtime override.
    @discardableResult
    public func removeAllOverrides() throws(EnvironmentError) -> ReloadOutcome {
        try apply { state throws(EnvironmentError) in state.overrides.removeAll() }
    }

    // MARK: - Applying a change

    /// Applies one change: holding ``writer`` throughout (so changes apply one at a time, in
    /// order, and none is built from inputs another one replaced), builds a snapshot from the
    /// inputs as `change` leaves them and, if it differs, publishes it and queues the change
    /// for the observers.
    ///
    /// The application's `validate` runs inside: it may read this environment (the current
    /// snapshot, ``options``, ``lastError``), but must not change it: a change that it starts
    /// throws ``EnvironmentError/Code/reentrantChange`` (it would wait for itself).
    ///
    /// - Parameters:
    ///   - startingOver: A new origin: no restart-only key keeps its old value.
    ///   - operation: The public method that asked, for the reentrancy error.
    func apply(
        startingOver: Bool = false, operation: String = #function,
        _ change: (inout WriterState) throws(EnvironmentError) -> Void
    ) throws(EnvironmentError) -> ReloadOutcome {
        guard let outcome = try apply(startingOver: startingOver, operation: operation, gate: { $0() }, change) else {
            preconditionFailure("a gate that always publishes published")
        }
        return outcome
    }

    /// ``apply(startingOver:operation:_:)``, publishing through `gate` (see
    /// ``reload(publishingThrough:)``); `nil` if `gate` did not publish.
    private func apply(
        startingOver: Bool = false, operation: String = #function,
        gate: (_ publish: () -> ReloadOutcome) -> ReloadOutcome?,
        _ change: (inout WriterState) throws(EnvironmentError) -> Void
    ) throws(EnvironmentError) -> ReloadOutcome? {
        try refuseChangeFromValidate(operation)
        return try writer.withLock { (state: inout WriterState) throws(EnvironmentError) -> ReloadOutcome? in
            parts.buildingThread.store(currentThreadID(), ordering: .relaxed)
            defer { parts.buildingThread.store(0, ordering: .relaxed) }
            var next = state
            try change(&next)
            if next.origin == nil {
                // `shared`, never read yet: load its defaults first, then apply the change to them.
                loadDefaults(into: &state)
                next.origin = state.origin
            }
            guard let origin = next.origin else { preconditionFailure("loadDefaults sets the origin") }
            let previous = store.load()
            let built = try SnapshotBuilder(
                options: origin.options, overrides: next.overrides, readsFiles: origin.readsFiles
            )
            .build(previous: startingOver ? nil : previous, generation: (previous?.generation ?? 0) + 1)
            return gate { () -> ReloadOutcome in
                state = next
                status.withLock { $0 = Status(options: origin.readsFiles ? origin.options : nil, lastError: nil) }
                guard let previous else {
                    // The first snapshot of `shared` (a bootstrap before any read): nobody to tell.
                    store.publish(built)
                    return .unchanged(built)
                }
                if built.hasSameContent(as: previous) { return .unchanged(previous) }
                store.publish(built)
                let event = EnvironmentChange(
                    previous: previous, current: built, changedKeys: built.changedKeys(since: previous))
                observers.deliver(event)
                return .applied(event)
            }
        }
    }

    /// Throws ``EnvironmentError/Code/reentrantChange`` if this thread is building a change of
    /// this environment, which holds ``writer``: `operation` was called from `validate`.
    private func refuseChangeFromValidate(_ operation: String) throws(EnvironmentError) {
        guard parts.buildingThread.load(ordering: .relaxed) == currentThreadID() else { return }
        throw EnvironmentError(
            .reentrantChange,
            "validate must not call \(operation) on the environment it is validating: the change being "
                + "validated is still being made, and this call would wait for it",
            environment: store.load()?.environmentName,
            hint:
                "Judge only the snapshot that validate is given; change the configuration after the reload returns, "
                + "or from an observer")
    }

    // MARK: - Loading `shared` on first use

    /// The current snapshot of ``shared``, read before anything was loaded: loads the
    /// conventional defaults (waiting for a bootstrap in progress, which wins).
    ///
    /// Only ``shared`` reaches this, and only until its first snapshot is published; the
    /// `validate` of a bootstrap in progress, which holds ``writer``, reads an empty
    /// configuration instead of waiting for itself.
    func loadDefaults() -> EnvironmentSnapshot {
        if parts.buildingThread.load(ordering: .relaxed) == currentThreadID() {
            return Self.emptySnapshot(options: EnvironmentOptions())
        }
        return writer.withLock { state in
            if let snapshot = store.load() { return snapshot }
            loadDefaults(into: &state)
            return store.load() ?? Self.emptySnapshot(options: EnvironmentOptions())
        }
    }

    /// Loads the conventional defaults into an empty ``shared``, holding ``writer``: on
    /// failure, logs the error, keeps it as ``lastError`` and publishes an empty configuration.
    private func loadDefaults(into state: inout WriterState) {
        let options = EnvironmentOptions().anchoringPaths()
        let snapshot: EnvironmentSnapshot
        var failure: EnvironmentError?
        do throws(EnvironmentError) {
            try options.checkNames()
            snapshot = try SnapshotBuilder(options: options, overrides: [], readsFiles: true)
                .build(previous: nil, generation: 1)
        } catch {
            options.logger.error(
                "cannot load configuration",
                metadata: [
                    "error": "\(error)",
                    "hint": "call Environment.bootstrap(_:) early in main with the options the program needs",
                ])
            failure = error
            snapshot = Self.emptySnapshot(options: options)
        }
        state.origin = Origin(options: options, readsFiles: true)
        status.withLock { $0 = Status(options: options, lastError: failure) }
        store.publish(snapshot)
    }

    /// A configuration with no values, for `shared` when its defaults do not load.
    private static func emptySnapshot(options: EnvironmentOptions) -> EnvironmentSnapshot {
        EnvironmentSnapshot(
            environmentName: options.environment ?? options.build.defaultEnvironment, generation: 1, tree: [:],
            files: [], location: ConfigurationLocation(options: options), secretKeys: [],
            restartRequiredKeys: [], pendingRestart: [:], logger: options.logger)
    }
}

/// Names the calling thread, for as long as it runs; never 0.
private func currentThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}
