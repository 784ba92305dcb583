package import CoreMetrics
package import Environments
package import EnvironmentsControl
package import Logging
package import SystemdSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Runs the load at start and the reloads one at a time, and tells everyone about each.
///
/// Each attempt follows one sequence: build (files, credentials, `validate`) on the build queue
/// (``ReloadBuilds``), never on the actor, which is free meanwhile; swap (the environment
/// publishes the new snapshot, unless the service is stopping); then announce: one
/// `ReloadReport` is made of the outcome, and each output renders it — the log, the journal's
/// configuration entries (``ConfigurationReporter``), the history (``ReloadHistory``), the
/// metrics (``ReloadMetrics``), the state file (``ReloadState``), systemd's `STATUS=` with
/// `READY=1` (``SystemdStatus``), the control socket's verdict, and a source's observers.
/// Reloads take turns, so their notifications and reports never mix. ``abandonReloads()`` lets
/// a stopping service stop waiting for a build however long it takes.
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
    /// The last reload, or `nil` before the first (the load at start is none).
    private var lastReload: ReloadReport?
    /// The last loads and reloads, for the control socket's `History`.
    private var history = ReloadHistory()
    /// Where the builds run.
    private nonisolated let builds = ReloadBuilds()
    /// Whether a reload (or a catch-up) has its turn.
    private var isReloading = false
    /// The reloads waiting for their turn, first come first served.
    private var turnWaiters: [CheckedContinuation<Void, Never>] = []
    /// What `STATUS=` adds to the configuration's generation, by topic: how files are watched
    /// when inotify is not available, where the fleet configuration comes from when etcd is not.
    private var statusNotes: [String: String] = [:]
    /// Whether `READY=1` is out: the configuration is watched and, when the application's
    /// word is awaited (``waitsForApplication``), the application serves.
    private var isReady = false
    private var readyWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether `READY=1` waits for ``applicationIsServing()`` too
    /// (`EnvironmentService.Readiness.whenApplicationServes`).
    package nonisolated let waitsForApplication: Bool
    /// Whether ``configurationIsWatched()`` was called.
    private var isWatching = false
    private var watchingWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether ``applicationIsServing()`` was called.
    private var applicationServes = false
    /// Set by ``stop()``: a reload that comes later (another service's) writes no state file.
    private var isStopped = false
    /// This process, as the state file names it (read from `/proc` once, not on every reload).
    private nonisolated let process = DaemonProcess.current
    /// More outputs of each record (a fleet's status key), called on the actor: each must
    /// return at once, and do its work elsewhere.
    private var renderers: [@Sendable (ReloadReport) -> Void] = []
    /// The last report announced, for a renderer added after it.
    private var lastAnnounced: ReloadReport?

    /// Creates a reloader.
    ///
    /// - Parameters:
    ///   - environment: The environment to reload.
    ///   - notifier: Sends readiness and reload notifications to systemd.
    ///   - reporter: Writes the configuration entries to the journal.
    ///   - stateFile: Where to publish ``ReloadState`` for scripts and monitoring, or `nil`.
    ///   - levelControl: Receives the `LogLevel` setting after every load, or `nil`.
    ///   - logLevelKey: The key that holds the log level.
    ///   - logger: Where reloads are logged.
    ///   - metricsFactory: Makes the reload metrics (``ReloadMetrics``); `nil` for the factory
    ///     the process bootstrapped with `MetricsSystem.bootstrap`.
    ///   - waitsForApplication: Whether `READY=1` waits for ``applicationIsServing()`` as well
    ///     as for ``configurationIsWatched()``.
    package init(
        environment: Environment, notifier: SystemdNotifier = SystemdNotifier(), reporter: ConfigurationReporter,
        stateFile: String? = ReloadState.defaultPath(), levelControl: LogLevelControl? = .shared,
        logLevelKey: String = "LogLevel", logger: Logger, metricsFactory: (any MetricsFactory)? = nil,
        waitsForApplication: Bool = false
    ) {
        self.waitsForApplication = waitsForApplication
        self.metrics = ReloadMetrics(factory: metricsFactory)
        self.environment = environment
        self.notifier = notifier
        self.reporter = reporter
        self.stateFile = stateFile
        self.levelControl = levelControl
        self.logLevelKey = logLevelKey
        self.logger = logger
    }

    /// Sets (or, with `nil`, clears) the `STATUS=` note about `topic`, and sends the new
    /// `STATUS=` at once when the service is ready.
    package func setStatusNote(_ note: String?, for topic: String) {
        guard statusNotes[topic] != note else { return }
        statusNotes[topic] = note
        if isReady { notifier.status(SystemdStatus.text(of: environment.snapshot, notes: statusNotes)) }
    }

    /// The file watcher switched to polling (with the kernel's reason) or back to inotify
    /// (`nil`): `STATUS=` says so from now on.
    package func filesPolled(because reason: String?) {
        metrics.polling(reason != nil)
        setStatusNote(reason.map { "watching files by polling (\($0))" }, for: "files")
    }

    /// The last reload attempt (the state file's `lastReload`, `Describe`'s), or `nil` before
    /// the first.
    package var lastReloadReport: ReloadReport? { lastReload }

    /// The last loads and reloads, oldest first (``ReloadHistory`` says how many).
    package var historyReply: HistoryReply {
        HistoryReply(entries: history.entries, limit: ReloadHistory.maximumEntries, dropped: history.dropped)
    }

    /// Announces the configuration loaded at start: applies the log level, logs and reports it,
    /// and writes the state file. ``configurationIsWatched()`` follows once the daemon watches
    /// its files.
    package func start() {
        let now = MonotonicClock.nowMicroseconds()
        let snapshot = environment.snapshot
        announce(
            ReloadReport(.loaded, configuration: snapshot, cause: nil, startedMonotonicMicroseconds: now),
            configuration: snapshot)
    }

    /// Removes the state file on a clean stop (a crash leaves it, and a reader tells it is stale
    /// from the process it names).
    package func stop() {
        isStopped = true
        guard let stateFile else { return }
        ReloadState.remove(at: stateFile)
    }

    /// The configuration is loaded and watched (or cannot be watched): releases
    /// ``waitUntilWatching()``, and sends `READY=1` unless it waits for the application too.
    package func configurationIsWatched() {
        guard !isWatching else { return }
        isWatching = true
        for waiter in watchingWaiters { waiter.resume() }
        watchingWaiters = []
        notifyReadyIfBothAreReady()
    }

    /// The application accepts connections: sends `READY=1` if the configuration is watched
    /// (else that sends it). Without ``waitsForApplication``, changes nothing.
    package func applicationIsServing() {
        guard !applicationServes else { return }
        applicationServes = true
        notifyReadyIfBothAreReady()
    }

    /// Sends `READY=1` with `STATUS=` (once) and releases ``waitUntilReady()``, when the
    /// configuration is watched and, if it waits for it, the application serves.
    private func notifyReadyIfBothAreReady() {
        guard !isReady, isWatching, applicationServes || !waitsForApplication else { return }
        isReady = true
        notifier.ready(status: SystemdStatus.text(of: environment.snapshot, notes: statusNotes))
        for waiter in readyWaiters { waiter.resume() }
        readyWaiters = []
    }

    /// Returns once `READY=1` is out (whether or not systemd is told), or the service stops
    /// before (``releaseWaiters()``).
    package func waitUntilReady() async {
        if isReady || waitersReleased { return }
        await withCheckedContinuation { readyWaiters.append($0) }
    }

    /// Whether ``releaseWaiters()`` was called.
    private var waitersReleased = false

    /// For a service that stops before it is ready (its application never served: a bind that
    /// failed): every wait for readiness or watching returns now, and later ones at once, so
    /// that the tasks waiting end and the service returns. Sends nothing to systemd.
    package func releaseWaiters() {
        waitersReleased = true
        for waiter in readyWaiters + watchingWaiters { waiter.resume() }
        readyWaiters = []
        watchingWaiters = []
    }

    /// Returns once ``configurationIsWatched()`` was called: every change from then on is
    /// applied, whether or not `READY=1` is out.
    package func waitUntilWatching() async {
        if isWatching || waitersReleased { return }
        await withCheckedContinuation { watchingWaiters.append($0) }
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

    /// Builds the configuration as a reload would, with `candidates` (file contents by absolute
    /// path) in place of the files there, on the build queue: the control socket's `Check`.
    nonisolated func check(candidates: [String: Data]) async -> ReloadBuilds.CheckOutcome {
        await builds.check(environment, candidates: candidates)
    }

    /// Reloads quietly, without `RELOADING=1`, to pick up a change made between the first
    /// load and the start of watching; announces only if something changed or was rejected.
    package func catchUp() async {
        await takeTurn()
        defer { endTurn() }
        let started = MonotonicClock.nowMicroseconds()
        guard let built = await builds.reload(environment) else { return }
        if case .success(.unchanged) = built { return }
        let kept = environment.snapshot
        announce(
            ReloadReport(
                built, keeping: kept, cause: ReloadCause(trigger: .file), startedMonotonicMicroseconds: started),
            configuration: built.configuration(keeping: kept), change: built.change)
    }

    /// Reloads the configuration and reports the result. Never throws: a rejected
    /// configuration is logged and reported, and the last good one stays.
    ///
    /// The build runs off the actor (``ReloadBuilds``). After ``abandonReloads()`` (the
    /// service is stopping) this returns at once, with a rejected record that says so, and
    /// only logs it: no `READY=1` follows `STOPPING=1`.
    ///
    /// - Parameters:
    ///   - trigger: What started the reload.
    ///   - callerUID: A control call's caller, for the history and the journal.
    ///   - callerUnit: The systemd service unit the caller runs in, for the history and the
    ///     journal.
    ///   - revision: The revision of a source's documents (etcd's, for the fleet), for the
    ///     history and the journal.
    /// - Returns: The report, which the state file and the control socket's `Reload` give as a
    ///   verdict.
    @discardableResult
    package func reload(
        trigger: ReloadTrigger, callerUID: UInt32? = nil, callerUnit: String? = nil, revision: Int64? = nil
    ) async
        -> ReloadReport
    {
        await reload(ReloadCause(trigger: trigger, callerUID: callerUID, callerUnit: callerUnit, revision: revision))
    }

    /// Reloads as ``reload(trigger:callerUID:callerUnit:revision:)`` does, for a source
    /// (``EnvironmentService/reload(from:revision:)``): the report a source sees.
    package func reload(from source: some ConfigurationSource, revision: Int64?) async -> ReloadReport {
        await reload(ReloadCause(trigger: ReloadTrigger(source), revision: revision))
    }

    /// One reload in its turn, announced: its report.
    private func reload(_ cause: ReloadCause) async -> ReloadReport {
        await takeTurn()
        defer { endTurn() }
        let started = MonotonicClock.nowMicroseconds()
        let built: Result<ReloadOutcome, EnvironmentError>?
        // Before READY=1 (a control call or a file change while the application starts),
        // systemd hears of no reload: RELOADING=1 and READY=1 are for a unit that is active.
        let tellsSystemd = isReady
        if builds.isAbandoned {
            built = nil
        } else {
            if tellsSystemd { notifier.reloading(status: SystemdStatus.reloading(cause.trigger)) }
            built = await builds.reload(environment)
        }
        let kept = environment.snapshot
        guard let built else {
            let report = ReloadReport(
                .abandoned, configuration: kept, cause: cause, startedMonotonicMicroseconds: started)
            announce(report, configuration: kept)
            return report
        }
        let report = ReloadReport(built, keeping: kept, cause: cause, startedMonotonicMicroseconds: started)
        announce(report, configuration: built.configuration(keeping: kept), change: built.change)
        // After the state file: a script that reads it once `systemctl reload` returns (systemd
        // waits for this READY=1) reads this reload's verdict.
        if tellsSystemd { notifier.ready(status: SystemdStatus.text(after: report, notes: statusNotes)) }
        return report
    }

    /// Renders `report` everywhere: the log level, the log, the journal, the history, the last
    /// reload, the metrics, the state file and the renderers (a source's observers).
    /// `configuration` is the configuration in use after it, and `change` an applied reload's
    /// snapshots (the log and the journal list settings and their values before). An abandoned
    /// reload, which changed nothing, is only logged.
    private func announce(
        _ report: ReloadReport, configuration: EnvironmentSnapshot, change: EnvironmentChange? = nil
    ) {
        if report.tookEffect { applyLogLevel(configuration) }
        // Without a journal the reporter renders the event through this same logger, with its
        // settings: the event's own line would say it a second time.
        if !reporter.rendersThroughLogger || report.outcome == .abandoned {
            logger.log(report, configuration: configuration, previous: change?.previous)
        }
        guard report.outcome != .abandoned else { return }
        reporter.report(report, configuration: configuration, previous: change?.previous)
        history.append(report)
        if report.outcome != .loaded { lastReload = report }
        metrics.record(report)
        writeState(report, configuration: configuration)
        lastAnnounced = report
        for renderer in renderers { renderer(report) }
    }

    /// Adds an output of every load and reload (``EnvironmentService/onReload(_:)``): `renderer`
    /// is called with each one's `ReloadReport` once it is announced, and at once with the
    /// last one announced before. It runs on the reloader and must return at once: hand the
    /// report to a task of your own.
    package func addRenderer(_ renderer: @escaping @Sendable (ReloadReport) -> Void) {
        renderers.append(renderer)
        if let lastAnnounced { renderer(lastAnnounced) }
    }

    /// Writes the state file after `report`, unless the service stopped.
    private func writeState(_ report: ReloadReport, configuration: EnvironmentSnapshot) {
        guard let stateFile, !isStopped else { return }
        let state = ReloadState(
            report, configuration: configuration, lastReload: lastReload, options: environment.options,
            process: process)
        do {
            try state.write(to: stateFile)
        } catch {
            logger.warning(
                "cannot write the reload state file", metadata: ["path": "\(stateFile)", "error": "\(error)"])
        }
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
}

extension Result<ReloadOutcome, EnvironmentError> {
    /// The configuration in use after the build: the new one, or `current` when it was rejected.
    fileprivate func configuration(keeping current: EnvironmentSnapshot) -> EnvironmentSnapshot {
        guard case .success(let outcome) = self else { return current }
        return outcome.snapshot
    }

    /// An applied build's change.
    fileprivate var change: EnvironmentChange? {
        guard case .success(.applied(let change)) = self else { return nil }
        return change
    }
}
