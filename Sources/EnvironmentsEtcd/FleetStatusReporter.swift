#if Fleet
    import Environments
    import EnvironmentsControl
    import EnvironmentsDaemon
    import EtcdFleetClient
    import Locking
    import Logging
    import ServiceLifecycle

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// Keeps this host's status key (``FleetHostStatus``, `PREFIX/.status/HOST`) up to date: one
    /// more output of the reload record (`EnvironmentService.onReload(_:)`), written by a
    /// task of its own so that reporting never holds up a reload.
    ///
    /// - The key is attached to a lease of ``FleetStatusOptions/ttl`` (30 s), renewed every third
    ///   of it (`/v3/lease/keepalive`, which writes no revision); when etcd no longer has the
    ///   lease (the host was cut off longer than the TTL), a new one is granted and the value
    ///   written again.
    /// - The value is written when the report changes, at most once per
    ///   ``FleetStatusOptions/minimumWriteInterval`` (the newest report wins), and rewritten every
    ///   ``FleetStatusOptions/refresh`` (60 s) so that `renewed` tells readers the host is alive.
    /// - A write etcd refuses (no permission, no leader, unreachable) is logged once, then retried
    ///   with a backoff up to 5 minutes; the daemon carries on. A graceful stop revokes the
    ///   lease, so the key goes at once.
    final class FleetStatusReporter: Sendable {
        private let client: EtcdClient
        private let key: String
        private let host: String
        private let options: FleetStatusOptions
        private let layer: FleetLayer
        private let logger: Logger
        private let wake: AsyncStream<Void>
        private let wakeContinuation: AsyncStream<Void>.Continuation

        private struct Pending {
            /// The newest report, not yet written when `dirty`.
            var status: FleetHostStatus?
            var dirty = false
            /// The documents the configuration in use was built from.
            var running: (revision: Int64, fingerprint: String)?
        }
        private let pending = Locked(Pending())

        init(fleet: EtcdFleet, instance: String?, options: FleetStatusOptions) {
            client = fleet.client
            host = options.resolvedHostID(instance: instance)
            key = FleetHostStatus.key(prefix: fleet.configuration.prefix, host: host)
            self.options = options
            layer = fleet.layer
            logger = fleet.logger
            (wake, wakeContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        }

        /// Renders `report` as this host's status, to be written soon: called on the reloader.
        func render(_ report: ReloadReport) {
            let attempted = layer.documentsIdentity
            let now = Date()
            pending.withLock { pending in
                if report.verdict != .rejected || pending.running == nil { pending.running = attempted }
                let last =
                    FleetHostStatus.Change(
                        report, of: layer.name, revision: attempted.revision, fingerprint: attempted.fingerprint,
                        at: now)
                    ?? pending.status?.last
                pending.status = FleetHostStatus(
                    after: report, host: host, running: pending.running!, last: last,
                    version: options.applicationVersion, renewed: now,
                    ttl: options.ttlSeconds, refresh: Int(options.refresh.components.seconds))
                pending.dirty = true
            }
            wakeContinuation.yield()
        }

        /// Writes and renews the status key until the service stops; revokes the lease on a
        /// graceful stop.
        func run() async {
            // A graceful stop wakes the loop, which then revokes the lease.
            await withGracefulShutdownHandler {
                await report()
            } onGracefulShutdown: { [wakeContinuation] in
                wakeContinuation.yield()
            }
        }

        /// The loop of ``run()``: waits for the next thing due (a renewal, a refresh, a report
        /// written no sooner than the minimum interval, a retry), then does it.
        private func report() async {
            // One iterator for the whole run: an `AsyncStream` ends for good when a task waiting
            // on it is cancelled, so the waits below must not cancel the one that waits for a wake.
            var wakes = wake.makeAsyncIterator()
            let clock = ContinuousClock()
            var schedule = Schedule(now: clock.now, renewInterval: Duration.seconds(options.ttlSeconds) / 3)
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let dirty = pending.withLock { $0.dirty && $0.status != nil }
                let deadline = schedule.deadline(dirty: dirty, now: clock.now)
                if deadline > clock.now { await waitForWake(until: deadline, on: &wakes) }
                if Task.isCancelled || Task.isShuttingDownGracefully { break }
                if let retryAt = schedule.retryAt, retryAt > clock.now { continue }
                schedule.retryAt = nil
                do {
                    guard try await holdLease(&schedule, clock: clock) else { continue }
                    try await writeIfDue(&schedule, clock: clock)
                    if schedule.reported != nil {
                        logger.notice("fleet status reported again", metadata: ["etcd_key": "\(key)"])
                        schedule.reported = nil
                    }
                    schedule.backoff = .seconds(1)
                } catch {
                    if Task.isCancelled || Task.isShuttingDownGracefully { break }
                    failed(error, &schedule, clock: clock)
                }
            }
            if Task.isShuttingDownGracefully, let lease = schedule.lease {
                // The key goes with the lease at once; a daemon that is killed drops out after the TTL.
                try? await client.revokeLease(lease)
            }
        }

        /// When the loop does what: the lease and its renewal, the refresh, the last write, a
        /// retry after a failure with its backoff, and the failure last logged.
        private struct Schedule {
            var lease: Int64?
            var nextRenewal: ContinuousClock.Instant
            var nextRefresh: ContinuousClock.Instant
            var lastWrite: ContinuousClock.Instant?
            var retryAt: ContinuousClock.Instant?
            var backoff = Duration.seconds(1)
            /// The kind of the failure logged last (`nil` once a write succeeded again).
            var reported: String?
            let renewInterval: Duration

            init(now: ContinuousClock.Instant, renewInterval: Duration) {
                nextRenewal = now
                nextRefresh = now
                self.renewInterval = renewInterval
            }

            /// The next renewal or refresh, a pending report's earliest write, or the retry.
            func deadline(dirty: Bool, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
                if let retryAt { return retryAt }
                var deadline = min(nextRenewal, nextRefresh)
                if dirty {
                    deadline = min(
                        deadline, (lastWrite ?? now - .seconds(60)) + FleetStatusOptions.minimumWriteInterval)
                }
                return deadline
            }
        }

        /// Grants a lease, or renews the one held when due; `false` when it expired meanwhile
        /// (the next turn grants a new one, and writes the value again).
        private func holdLease(_ schedule: inout Schedule, clock: ContinuousClock) async throws(EtcdError) -> Bool {
            if schedule.lease == nil {
                schedule.lease = try await client.grantLease(ttl: options.ttlSeconds)
                schedule.nextRenewal = clock.now + schedule.renewInterval
                schedule.nextRefresh = clock.now  // a new lease: the value is written again
            } else if clock.now >= schedule.nextRenewal {
                let ttl = try await client.keepAlive(lease: schedule.lease!)
                if ttl == 0 {
                    schedule.lease = nil  // expired while cut off
                    return false
                }
                schedule.nextRenewal = clock.now + schedule.renewInterval
            }
            return true
        }

        /// Writes the status under the lease when a report waits (and the minimum interval has
        /// passed) or the refresh is due.
        private func writeIfDue(_ schedule: inout Schedule, clock: ContinuousClock) async throws(EtcdError) {
            let isDirty = pending.withLock { $0.dirty }
            let writeDue =
                (isDirty
                    && (schedule.lastWrite.map { clock.now - $0 >= FleetStatusOptions.minimumWriteInterval } ?? true))
                || clock.now >= schedule.nextRefresh
            // Taken and marked written at once: a report rendered meanwhile is written next.
            let taken = pending.withLock { pending -> FleetHostStatus? in
                guard writeDue else { return nil }
                pending.dirty = false
                return pending.status
            }
            if var status = taken {
                status.renewed = Date()
                try await client.put(key, status.encoded(), lease: schedule.lease!)
                schedule.lastWrite = clock.now
            }
            // Nothing to write yet (no report before the load at start): the first report
            // wakes the loop; until then it waits for renewals, not in a busy loop.
            if writeDue { schedule.nextRefresh = clock.now + options.refresh }
        }

        /// A failed turn: a lost lease is granted again, the report written again, the failure
        /// logged once per kind, and the next try backs off.
        private func failed(_ error: EtcdError, _ schedule: inout Schedule, clock: ContinuousClock) {
            if error.code == 5 || error.message.contains("requested lease not found") { schedule.lease = nil }
            pending.withLock { $0.dirty = $0.status != nil }
            let kind = error.isPermissionDenied ? "denied" : error.message
            if schedule.reported != kind {
                schedule.reported = kind
                logger.warning(
                    error.isPermissionDenied
                        ? "etcd refuses this host's status key; the daemon carries on without reporting, and retries"
                        : "cannot report the fleet status; retrying",
                    metadata: [
                        "etcd_key": "\(key)", "error": "\(error)",
                        "hint": error.isPermissionDenied
                            ? "the host's etcd role needs readwrite on \(key) (see the FleetStatus article of EnvironmentsEtcd)"
                            : "the daemon keeps running; envctl fleet status shows this host as stale meanwhile",
                    ])
            }
            schedule.retryAt = clock.now + schedule.backoff
            schedule.backoff = min(
                schedule.backoff * 2, error.isPermissionDenied ? .seconds(300) : schedule.renewInterval)
        }

        /// Returns at `deadline`, or earlier when a report arrives or the service stops (a wake
        /// left over from an earlier wait may end it at once; the loop then waits again).
        private func waitForWake(
            until deadline: ContinuousClock.Instant, on wakes: inout AsyncStream<Void>.Iterator
        ) async {
            let timer = Task { [wakeContinuation] in
                guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                wakeContinuation.yield()
            }
            _ = await wakes.next()
            timer.cancel()
        }
    }
#endif
