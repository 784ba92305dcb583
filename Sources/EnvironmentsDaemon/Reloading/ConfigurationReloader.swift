import CoreMetrics
import Environments
import EnvironmentsControl
import Foundation
import Logging
import SystemdSupport

/// Runs reloads one at a time and tells everyone about them: the log, systemd
/// (`RELOADING=1` with `MONOTONIC_USEC=`, then `READY=1` and `STATUS=`), the journal's
/// configuration entries, the state file that `envctl reload` waits on, and the log level.
///
/// A reload's build runs on a thread of its own (``ReloadBuilds``), not on the actor, which is
/// free meanwhile; reloads still take turns, so their notifications and reports never mix.
/// ``abandonReloads()`` lets a stopping service stop waiting for a build however long it takes.
package actor ConfigurationReloader {
    /// The environment being reloaded.
    package nonisolated let environment: Environment
    let notifier: SystemdNotifier
    let reporter: ConfigurationReporter
    let stateFile: String?
    let levelControl: LogLevelControl?
    let logLevelKey: String
    let logger: Logger
    /// The reload metrics (swift-metrics).
    package nonisolated let metrics: ReloadMetrics
    private var lastReload: ReloadState.LastReload?
    /// The last loads and reloads, for the control socket's `History`.
    private var history = ReloadHistory()
    /// Where the builds run.
    private nonisolated let builds = ReloadBuilds()
    /// Whether a reload (or a catch-up) has its turn.
    private var isReloading = false
    /// The reloads waiting for their turn, first come first served.
    private var turnWaiters: [CheckedContinuation<Void, Never>] = []

    /// Creates a reloader.
    ///
    /// - Parameters:
    ///   - environment: The environment to reload.
    ///   - notifier: Sends readiness and reload notifications to systemd.
    ///   - reporter: Writes the configuration entries to the journal.
    ///   - stateFile: Where to publish ``ReloadState`` for `envctl reload`, or `nil`.
    ///   - levelControl: Receives the `LogLevel` setting after every load, or `nil`.
    ///   - logLevelKey: The key that holds the log level.
    ///   - logger: Where reloads are logged.
    ///   - metricsFactory: Makes the reload metrics (``ReloadMetrics``); `nil` for the factory
    ///     the process bootstrapped with `MetricsSystem.bootstrap`.
    package init(
        environment: Environment, notifier: SystemdNotifier = SystemdNotifier(), reporter: ConfigurationReporter,
        stateFile: String? = ReloadState.defaultPath(), levelControl: LogLevelControl? = .shared,
        logLevelKey: String = "LogLevel", logger: Logger, metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.metrics = ReloadMetrics(factory: metricsFactory)
        self.environment = environment
        self.notifier = notifier
        self.reporter = reporter
        self.stateFile = stateFile
        self.levelControl = levelControl
        self.logLevelKey = logLevelKey
        self.logger = logger
    }

    /// The `STATUS=` text for a snapshot.
    package nonisolated static func status(of snapshot: EnvironmentSnapshot) -> String {
        "Environment \(snapshot.environmentName)" + (snapshot.instanceName.map { ", instance \($0)" } ?? "")
            + ", configuration generation \(snapshot.generation)"
    }

    /// What `STATUS=` adds to the configuration's generation, by topic: how files are watched
    /// when inotify is not available, where the fleet configuration comes from when etcd is not.
    private var statusNotes: [String: String] = [:]

    /// The `STATUS=` text for a snapshot, with the notes that apply now.
    private func statusText(for snapshot: EnvironmentSnapshot) -> String {
        var text = Self.status(of: snapshot)
        for topic in statusNotes.keys.sorted() { text += "; " + statusNotes[topic]! }
        return text
    }

    /// Sets (or, with `nil`, clears) the `STATUS=` note about `topic`, and sends the new
    /// `STATUS=` at once when the service is ready.
    package func setStatusNote(_ note: String?, for topic: String) {
        guard statusNotes[topic] != note else { return }
        statusNotes[topic] = note
        if isReady { notifier.status(statusText(for: environment.snapshot)) }
    }

    /// The file watcher switched to polling (with the kernel's reason) or back to inotify
    /// (`nil`): `STATUS=` says so from now on.
    package func filesPolled(because reason: String?) {
        metrics.polling(reason != nil)
        setStatusNote(reason.map { "watching files by polling (\($0))" }, for: "files")
    }

    /// The last reload attempt, or `nil` before the first.
    package var lastReloadRecord: ReloadState.LastReload? { lastReload }

    /// The last loads and reloads, oldest first (``ReloadHistory`` says how many).
    package var historyReply: HistoryReply {
        HistoryReply(entries: history.entries, limit: ReloadHistory.maximumEntries, dropped: history.dropped)
    }

    /// Adds an attempt to the history.
    private func remember(
        _ outcome: ReloadHistoryRecord.Outcome, _ snapshot: EnvironmentSnapshot, cause: ReloadCause?,
        change: EnvironmentChange? = nil, error: EnvironmentError? = nil
    ) {
        var record = ReloadHistoryRecord(
            time: ReloadHistory.timestamp(), outcome: outcome, generation: Int(snapshot.generation),
            environment: snapshot.environmentName, instance: snapshot.instanceName,
            trigger: cause?.trigger.rawValue ?? ReloadCause.startTrigger, callerUID: cause?.callerUID.map(Int.init),
            fleetRevision: cause?.fleetRevision.map(Int.init), pid: Int(getpid()))
        if let change {
            let kept = ReloadHistory.changes(of: change.changedKeys, from: change.previous, to: change.current)
            record.changes = kept.changes
            record.valuesOmitted = kept.valuesOmitted
            record.changedKeyCount = change.changedKeys.count
        }
        if let error {
            record.error = ConfigurationErrorRecord(
                code: "\(error.code)", message: error.message, description: error.description, key: error.key,
                file: error.file, line: error.line)
        }
        history.append(record)
    }

    private var isReady = false
    private var readyWaiters: [CheckedContinuation<Void, Never>] = []

    /// Announces the configuration loaded at start: applies the log level, reports the
    /// effective settings and writes the state file. ``notifyReady()`` follows once the
    /// daemon watches its files.
    package func start() {
        let snapshot = environment.snapshot
        applyLogLevel(snapshot)
        logger.info(
            "configuration loaded",
            metadata: [
                "environment": "\(snapshot.environmentName)", "generation": "\(snapshot.generation)",
                "files": "\(snapshot.files.joined(separator: ", "))",
            ])
        reporter.applied(snapshot, change: nil, cause: nil)
        reporter.warnings(snapshot)
        remember(.loaded, snapshot, cause: nil)
        writeState(snapshot)
        metrics.loaded(generation: snapshot.generation)
    }

    /// Removes the state file on a clean stop (a crash leaves it, and envctl tells it is stale
    /// from the process it names).
    package func stop() {
        isStopped = true
        guard let stateFile else { return }
        ReloadState.remove(at: stateFile)
    }

    /// Set by ``stop()``: a reload that comes later (another service's) writes no state file.
    private var isStopped = false

    /// Sends `READY=1` with `STATUS=` (once) and releases ``waitUntilReady()``.
    package func notifyReady() {
        guard !isReady else { return }
        isReady = true
        notifier.ready(status: statusText(for: environment.snapshot))
        for waiter in readyWaiters { waiter.resume() }
        readyWaiters = []
    }

    /// Returns once ``notifyReady()`` was called.
    package func waitUntilReady() async {
        if isReady { return }
        await withCheckedContinuation { readyWaiters.append($0) }
    }

    /// Waits for this reload's turn (none runs while another one's build is in progress).
    private func takeTurn() async {
        guard isReloading else {
            isReloading = true
            return
        }
        await withCheckedContinuation { turnWaiters.append($0) }
    }

    /// Hands the turn to the next reload, if one waits.
    private func endTurn() {
        if turnWaiters.isEmpty {
            isReloading = false
        } else {
            turnWaiters.removeFirst().resume()
        }
    }

    /// Stops waiting for the build in progress, and for any later one: for a service that
    /// stops, which must not wait for a build (a slow file system, a `validate` that hangs).
    /// No reload takes effect after this returns; a build still running ends unseen.
    package nonisolated func abandonReloads() {
        builds.abandon()
    }

    /// Reloads quietly, without `RELOADING=1`, to pick up a change made between the first
    /// load and the start of watching; reports only if something changed.
    package func catchUp() async {
        await takeTurn()
        defer { endTurn() }
        let started = MonotonicClock.nowMicroseconds()
        let trigger = ReloadTrigger.fileChange
        let cause = ReloadCause(trigger: trigger)
        let record: ReloadState.LastReload
        guard let outcome = await builds.reload(environment) else { return }
        do {
            guard case .applied(let change) = try outcome.get() else { return }
            announce(change, cause: cause)
            writeState(change.current)
            record = ReloadState.LastReload(
                outcome: .applied, startedMonotonicMicroseconds: started,
                finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), trigger: trigger.rawValue,
                generation: change.current.generation, changedKeys: change.changedKeys)
        } catch {
            reportRejection(error, cause: cause)
            record = ReloadState.LastReload(
                rejectedWith: error, startedMonotonicMicroseconds: started,
                finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), trigger: trigger.rawValue,
                generation: environment.generation)
        }
        metrics.reloaded(record, trigger: trigger)
    }

    /// Reloads the configuration and reports the result. Never throws: a rejected
    /// configuration is logged and reported, and the last good one stays.
    ///
    /// The build runs off the actor (``ReloadBuilds``). After ``abandonReloads()`` (the
    /// service is stopping) this returns at once, with a rejected record that says so, and
    /// reports nothing: no `READY=1` follows `STOPPING=1`.
    ///
    /// - Parameters:
    ///   - trigger: What started the reload.
    ///   - callerUID: A control call's caller, for the history and the journal.
    ///   - fleetRevision: A fleet change's etcd revision, for the history and the journal.
    @discardableResult
    package func reload(trigger: ReloadTrigger, callerUID: UInt32? = nil, fleetRevision: Int64? = nil) async
        -> ReloadState.LastReload
    {
        await takeTurn()
        defer { endTurn() }
        let cause = ReloadCause(trigger: trigger, callerUID: callerUID, fleetRevision: fleetRevision)
        let started = MonotonicClock.nowMicroseconds()
        if builds.isAbandoned { return abandonedRecord(started: started, trigger: trigger) }
        notifier.reloading(status: "Reloading configuration (\(trigger.rawValue))")
        guard let built = await builds.reload(environment) else {
            return abandonedRecord(started: started, trigger: trigger)
        }
        let record: ReloadState.LastReload
        do {
            let outcome = try built.get()
            switch outcome {
            case .applied(let change):
                let snapshot = change.current
                announce(change, cause: cause)
                record = ReloadState.LastReload(
                    outcome: .applied, startedMonotonicMicroseconds: started,
                    finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), trigger: trigger.rawValue,
                    generation: snapshot.generation, changedKeys: change.changedKeys)
            case .unchanged(let snapshot):
                // One entry, in the journal or the log.
                reporter.unchanged(snapshot, cause: cause)
                remember(.unchanged, snapshot, cause: cause)
                record = ReloadState.LastReload(
                    outcome: .unchanged, startedMonotonicMicroseconds: started,
                    finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), trigger: trigger.rawValue,
                    generation: snapshot.generation)
            }
        } catch {
            let snapshot = environment.snapshot
            reportRejection(error, cause: cause)
            record = ReloadState.LastReload(
                rejectedWith: error, startedMonotonicMicroseconds: started,
                finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), trigger: trigger.rawValue,
                generation: snapshot.generation)
        }
        lastReload = record
        metrics.reloaded(record, trigger: trigger)
        let snapshot = environment.snapshot
        // The state file first: when systemd sees READY=1, `envctl reload` can read the verdict.
        writeState(snapshot)
        var status = statusText(for: snapshot)
        if let error = record.error { status += "; reload rejected: \(error)" }
        notifier.ready(status: status)
        return record
    }

    /// The record of a reload abandoned because the service stops; logged, not reported.
    private func abandonedRecord(started: UInt64, trigger: ReloadTrigger) -> ReloadState.LastReload {
        let generation = environment.generation
        logger.notice(
            "reload abandoned: the service is stopping; keeping generation \(generation)",
            metadata: ["trigger": "\(trigger.rawValue)"])
        return ReloadState.LastReload(
            outcome: .rejected, startedMonotonicMicroseconds: started,
            finishedMonotonicMicroseconds: MonotonicClock.nowMicroseconds(), trigger: trigger.rawValue,
            generation: generation,
            error: "the service is stopping: the reload was abandoned, generation \(generation) stays")
    }

    private func reportRejection(_ error: EnvironmentError, cause: ReloadCause) {
        let snapshot = environment.snapshot
        var metadata: Logger.Metadata = ["trigger": "\(cause.trigger.rawValue)", "error_code": "\(error.code)"]
        if let file = error.file { metadata["config_file"] = "\(file)" }
        if let line = error.line { metadata["config_line"] = "\(line)" }
        if let key = error.key { metadata["config_key"] = "\(key)" }
        logger.error(
            "configuration reload rejected, keeping generation \(snapshot.generation): \(error)", metadata: metadata)
        reporter.rejected(error, keeping: snapshot, cause: cause)
        remember(.rejected, snapshot, cause: cause, error: error)
    }

    /// Sends `STOPPING=1`.
    package func stopping() {
        notifier.stopping(status: "Stopping")
    }

    /// An applied change: the log level, the log, the journal, pending restarts.
    private func announce(_ change: EnvironmentChange, cause: ReloadCause) {
        applyLogLevel(change.current)
        logChange(change, trigger: cause.trigger)
        reporter.applied(change.current, change: change, cause: cause)
        reporter.warnings(change.current)
        remember(.applied, change.current, cause: cause, change: change)
        if !change.current.pendingRestart.isEmpty { reportPending(change.current) }
    }

    private func logChange(_ change: EnvironmentChange, trigger: ReloadTrigger) {
        let snapshot = change.current
        let changes = change.changedKeys.map { key -> String in
            let old = change.previous.configuredValue(forKey: key).map { $0.displayValue() } ?? "<unset>"
            let new = snapshot.configuredValue(forKey: key).map { $0.displayValue() } ?? "<unset>"
            return "\(key): \(old) -> \(new)"
        }
        // Values the same, sources or pending restarts not: say what changed rather than "changed: ".
        let summary =
            change.changedKeys.isEmpty
            ? "no value changed (sources or pending restarts did)"
            : "changed: \(change.changedKeys.joined(separator: ", "))"
        logger.info(
            "configuration reloaded: generation \(snapshot.generation), \(summary)",
            metadata: [
                "trigger": "\(trigger.rawValue)", "environment": "\(snapshot.environmentName)",
                "generation": "\(snapshot.generation)", "changed_keys": "\(change.changedKeys.joined(separator: ","))",
                "changes": "\(changes.joined(separator: "; "))",
            ])
    }

    private func reportPending(_ snapshot: EnvironmentSnapshot) {
        for key in snapshot.pendingRestart.keys.sorted() {
            let current = snapshot.configuredValue(forKey: key)?.displayValue() ?? "<unset>"
            let waiting = snapshot.pendingRestart[key]!.displayValue()
            logger.warning(
                "'\(key)' changed to \(waiting) but can only change on restart; keeping \(current) (pending restart)",
                metadata: ["config_key": "\(key)"])
        }
        reporter.pendingRestart(snapshot)
    }

    private func applyLogLevel(_ snapshot: EnvironmentSnapshot) {
        guard let levelControl, logLevelOverride == nil,
            case .string(let text)? = snapshot.configuredValue(forKey: logLevelKey)?.value,
            let level = Logger.Level(rawValue: text.lowercased())
        else { return }
        if levelControl.level != level {
            levelControl.level = level
            logger.notice("log level is now \(level)")
        }
    }

    /// The log level set through `io.systemd.service.SetLogLevel`, which wins over the
    /// `LogLevel` setting until a restart; `nil` when there is none.
    package private(set) var logLevelOverride: LogLevelOverride?
    /// The level before the override, for when it is removed and no `LogLevel` is set.
    private var levelWithoutOverride: Logger.Level?

    /// Whether the log level can be set at all (the service follows a `LogLevelControl`).
    package nonisolated var controlsLogLevel: Bool { levelControl != nil }

    private static func overrideMessage(_ override: LogLevelOverride, uid: UInt32, key: String) -> String {
        "log level is now \(override.level), set by io.systemd.service.SetLogLevel from uid \(uid) "
            + "(syslog level \(override.syslogLevel)); it overrides \(key) until the daemon restarts"
    }

    /// Sets the log level above the `LogLevel` setting until a restart, or with `nil` goes back
    /// to the setting. Logged at `notice`, with who asked.
    package func overrideLogLevel(_ override: LogLevelOverride?, uid: UInt32) {
        guard let levelControl else { return }
        let previous = logLevelOverride
        logLevelOverride = override
        if previous == nil { levelWithoutOverride = levelControl.level }
        if let override {
            levelControl.level = override.level
            logger.notice(
                "\(Self.overrideMessage(override, uid: uid, key: logLevelKey))")
        } else if previous != nil {
            levelControl.level = levelWithoutOverride ?? levelControl.level
            applyLogLevel(environment.snapshot)
            logger.notice(
                "log level override removed by uid \(uid); the log level is \(levelControl.level) again (\(logLevelKey))"
            )
        }
    }

    private func writeState(_ snapshot: EnvironmentSnapshot) {
        guard let stateFile, !isStopped else { return }
        let options = environment.options
        var state = ReloadState(
            pid: getpid(), applicationName: options?.applicationName ?? "app", environment: snapshot.environmentName,
            configDirectory: options?.configDirectory, resolvedDirectory: snapshot.location?.directory,
            generation: snapshot.generation, files: snapshot.files,
            pendingRestart: snapshot.pendingRestart.keys.sorted(), lastReload: lastReload,
            credentialsDirectory: options?.processEnvironment[EnvironmentOptions.credentialsDirectoryVariable],
            runningValues: snapshot.pendingRestart.keys.reduce(into: [:]) { values, key in
                values[key] = snapshot.configuredValue(forKey: key)?.displayValue() ?? "<unset>"
            })
        state.instance = snapshot.instanceName
        let process = DaemonProcess.current
        state.processStartTime = process.startTime
        state.bootID = process.bootID
        do {
            try state.write(to: stateFile)
        } catch {
            logger.warning(
                "cannot write the reload state file", metadata: ["path": "\(stateFile)", "error": "\(error)"])
        }
    }
}
