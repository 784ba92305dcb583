#if Fleet
    import CoreMetrics
    import Environments
    import EnvironmentsDaemon
    import EtcdFleetClient
    import Logging
    import ServiceLifecycle

    /// Watches the fleet's documents and reloads the environment on every change of them.
    struct FleetWatch: Service, CustomStringConvertible {
        let fleet: EtcdFleet
        /// The service whose configuration the fleet's documents are part of.
        let service: EnvironmentService
        /// Keeps this host's status key, unless reporting is off.
        var status: FleetStatusReporter?

        var description: String { "EtcdFleet(\(fleet.configuration.prefix))" }

        private var client: EtcdClient { fleet.client }
        private var logger: Logger { fleet.logger }
        private var prefix: String { fleet.configuration.prefix }

        func run() async throws {
            defer { Task { await fleet.client.shutdown() } }
            guard let status else { return await watch() }
            // Both end when the service stops (the status after revoking its lease, so that this
            // host's key goes at once).
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await status.run() }
                group.addTask { await watch() }
                await group.waitForAll()
            }
        }

        /// Where the watch stands between its steps.
        private struct WatchProgress {
            /// The fleet's documents as last read or changed.
            var state: FleetState
            /// Whether to read everything before watching again.
            var needsFullRead: Bool
            /// Whether etcd was unreachable the last time it was tried.
            var offline: Bool
            /// How long to wait before the next attempt after losing the watch.
            var delay: Duration = .milliseconds(100)
            /// The revision of the fleet documents the configuration in use was built from, for
            /// `environments_fleet_revision_lag`; `inSync` while the last documents applied.
            var appliedRevision: Int64
            var inSync = true
        }

        /// `environments_fleet_revision_lag`: how many etcd revisions the configuration in use is
        /// behind the newest one the watch saw (0 when every change is applied; more after a
        /// rejected one), through the metrics factory the process bootstrapped.
        private static var revisionLag: Gauge { Gauge(label: "environments_fleet_revision_lag") }

        /// Applies every change of the fleet's documents until the service stops.
        private func watch() async {
            let state = fleet.layer.current
            // From the cache: read everything once etcd answers, as the cache may be old.
            var progress = WatchProgress(
                state: state, needsFullRead: fleet.startedFromCache, offline: fleet.startedFromCache,
                appliedRevision: state.revision)
            record(&progress, applied: nil)
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                let endpoint = client.currentEndpoint
                do {
                    if progress.needsFullRead { try await readWhole(&progress) }
                    try await follow(&progress, endpoint: endpoint)
                } catch let error as EtcdError where error.isCompacted {
                    progress.needsFullRead = true
                } catch let error as EtcdError where error.responseTooLarge {
                    // A message larger than the documents may be together (many revisions at once
                    // after a pause, or keys that are not documents): read the documents whole.
                    logger.notice(
                        "a fleet watch message is too large; reading the fleet whole",
                        metadata: ["error": "\(error)", "etcd_revision": "\(progress.state.revision)"])
                    progress.needsFullRead = true
                } catch {
                    if Task.isCancelled || Task.isShuttingDownGracefully { return }
                    await lostWatch(error, on: endpoint, &progress)
                }
            }
        }

        /// Notes the documents of `progress.state` as applied (`true`), refused (`false`) or
        /// unchanged for this host (`nil`), and publishes the revision lag.
        private func record(_ progress: inout WatchProgress, applied: Bool?) {
            if let applied { progress.inSync = applied }
            if progress.inSync { progress.appliedRevision = progress.state.revision }
            Self.revisionLag.record(Double(max(progress.state.revision - progress.appliedRevision, 0)))
        }

        /// Takes `state` as the fleet's documents: reloads when this host's changed, else keeps it
        /// for the next change (a staged publish's keys may differ: another host's stage).
        private func adopt(_ state: FleetState, changed: Bool, _ progress: inout WatchProgress) async {
            progress.state = state
            if changed {
                record(&progress, applied: await apply(state))
            } else {
                fleet.layer.update(state)
                record(&progress, applied: nil)
            }
        }

        /// Reads every document once, and applies them if this host's changed.
        private func readWhole(_ progress: inout WatchProgress) async throws(EtcdError) {
            let read = try await client.readFleet()
            progress.needsFullRead = false
            await adopt(read, changed: differ(read, progress.state), &progress)
        }

        /// Follows the watch from the revision after `progress.state`'s until it ends, fails, or
        /// needs a whole read.
        private func follow(_ progress: inout WatchProgress, endpoint: String) async throws {
            for try await update in client.watchFleet(from: progress.state.revision + 1).cancelOnGracefulShutdown() {
                progress.delay = .milliseconds(100)
                if progress.offline {
                    progress.offline = false
                    logger.notice(
                        "etcd reachable again; the fleet configuration is live",
                        metadata: ["etcd_endpoint": "\(endpoint)", "etcd_revision": "\(progress.state.revision)"])
                    await service.setStatusNote(nil, from: fleet.layer)
                }
                await handle(update, &progress)
                if progress.needsFullRead { break }
            }
        }

        /// One message of the watch: changes applied, or a whole read asked for.
        private func handle(_ update: EtcdClient.WatchUpdate, _ progress: inout WatchProgress) async {
            switch update {
            case .created:
                break
            case .changes(_, let changes)
            where progress.state.violation != nil
                && changes.contains(where: { FleetState.isDocumentKey($0.key, prefix: prefix) }):
                // Past a limit, the state lacks what was not read: read it whole again.
                progress.needsFullRead = true
            case .changes(let revision, let changes):
                var next = progress.state
                var changed = next.apply(changes, at: revision)
                if changed {
                    next.enforce(fleet.configuration.limits)
                    changed = differ(next, progress.state)
                }
                await adopt(next, changed: changed, &progress)
            case .compacted(let revision):
                logger.notice(
                    "the fleet's revision was compacted away; reading it whole",
                    metadata: ["etcd_revision": "\(progress.state.revision)", "compact_revision": "\(revision)"])
                progress.needsFullRead = true
            }
        }

        /// After the watch on `endpoint` failed: the next endpoint, the status note once etcd is
        /// unreachable, and a growing pause before the next attempt.
        private func lostWatch(_ error: any Error, on endpoint: String, _ progress: inout WatchProgress) async {
            client.rotate(after: endpoint)
            logger.warning(
                "lost the etcd watch; resuming from the last revision applied",
                metadata: [
                    "error": "\(error)", "etcd_revision": "\(progress.state.revision)",
                    "etcd_endpoint": "\(client.currentEndpoint)",
                ])
            if !progress.offline {
                progress.offline = true
                await service.setStatusNote(
                    "etcd unreachable, fleet configuration at revision \(progress.state.revision)", from: fleet.layer)
            }
            try? await Task.sleep(for: progress.delay)
            progress.delay = min(progress.delay * 2, .seconds(2))
        }

        /// Whether this host runs other documents in `new` than in `old` (a staged publish's keys
        /// change what only the hosts in its stage run).
        private func differ(_ new: FleetState, _ old: FleetState) -> Bool {
            let (new, old) = (fleet.layer.effective(new), fleet.layer.effective(old))
            return new.entries != old.entries || new.violation != old.violation
        }

        /// Takes `state` as the fleet's documents, reloads, and caches it once applied; whether
        /// the configuration in use now comes from them (`false` when the reload was rejected).
        private func apply(_ state: FleetState) async -> Bool {
            fleet.layer.update(state)
            let report = await service.reload(from: fleet.layer, revision: state.revision)
            guard report.outcome != .rejected, report.outcome != .abandoned else { return false }
            fleet.cacheLater(state)
            return true
        }
    }
#endif
