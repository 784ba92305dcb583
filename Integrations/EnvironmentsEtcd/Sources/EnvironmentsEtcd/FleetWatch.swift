@_spi(Integrations) import EnvironmentsControl
@_spi(Integrations) import EnvironmentsDaemon
import EtcdFleetClient
import Logging
import ServiceLifecycle

/// Watches the fleet's documents and reloads the environment on every change of them.
struct FleetWatch: Service, CustomStringConvertible {
    let fleet: EtcdFleet
    let reloader: ConfigurationReloader
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

    /// Applies every change of the fleet's documents until the service stops.
    private func watch() async {
        var state = fleet.layer.current
        // From the cache: read everything once etcd answers, as the cache may be old.
        var needsFullRead = fleet.startedFromCache
        var offline = fleet.startedFromCache
        var delay: Duration = .milliseconds(100)
        // The revision of the fleet documents the configuration in use was built from, for
        // `environments_fleet_revision_lag`; `inSync` while the last documents applied.
        var appliedRevision = state.revision
        var inSync = true
        func record(_ state: FleetState, applied: Bool?) {  // nil: the documents did not change
            if let applied { inSync = applied }
            if inSync { appliedRevision = state.revision }
            reloader.metrics.fleetRevisionLag(state.revision - appliedRevision)
        }
        record(state, applied: nil)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let endpoint = client.currentEndpoint
            do {
                if needsFullRead {
                    let read = try await client.readFleet()
                    needsFullRead = false
                    if differ(read, state) {
                        state = read
                        record(state, applied: await apply(state))
                    } else {
                        // The same documents for this host; a staged publish's keys may differ
                        // (another host's stage): keep them all, for the next change.
                        state = read
                        fleet.layer.update(state)
                        record(state, applied: nil)
                    }
                }
                for try await update in client.watchFleet(from: state.revision + 1).cancelOnGracefulShutdown() {
                    delay = .milliseconds(100)
                    if offline {
                        offline = false
                        logger.notice(
                            "etcd reachable again; the fleet configuration is live",
                            metadata: ["etcd_endpoint": "\(endpoint)", "etcd_revision": "\(state.revision)"])
                        await reloader.setStatusNote(nil, for: "etcd")
                    }
                    switch update {
                    case .created:
                        break
                    case .changes(_, let changes)
                    where state.violation != nil
                        && changes.contains(where: { FleetState.isDocumentKey($0.key, prefix: prefix) }):
                        // Past a limit, the state lacks what was not read: read it whole again.
                        needsFullRead = true
                    case .changes(let revision, let changes):
                        var next = state
                        var changed = next.apply(changes, at: revision)
                        if changed {
                            next.enforce(fleet.configuration.limits)
                            changed = differ(next, state)
                        }
                        state = next
                        if changed {
                            record(state, applied: await apply(state))
                        } else {
                            fleet.layer.update(state)
                            record(state, applied: nil)
                        }
                    case .compacted(let revision):
                        logger.notice(
                            "the fleet's revision was compacted away; reading it whole",
                            metadata: ["etcd_revision": "\(state.revision)", "compact_revision": "\(revision)"])
                        needsFullRead = true
                    }
                    if needsFullRead { break }
                }
            } catch let error as EtcdError where error.isCompacted {
                needsFullRead = true
            } catch let error as EtcdError where error.responseTooLarge {
                // A message larger than the documents may be together (many revisions at once
                // after a pause, or keys that are not documents): read the documents whole.
                logger.notice(
                    "a fleet watch message is too large; reading the fleet whole",
                    metadata: ["error": "\(error)", "etcd_revision": "\(state.revision)"])
                needsFullRead = true
            } catch {
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                client.rotate(after: endpoint)
                logger.warning(
                    "lost the etcd watch; resuming from the last revision applied",
                    metadata: [
                        "error": "\(error)", "etcd_revision": "\(state.revision)",
                        "etcd_endpoint": "\(client.currentEndpoint)",
                    ])
                if !offline {
                    offline = true
                    await reloader.setStatusNote(
                        "etcd unreachable, fleet configuration at revision \(state.revision)", for: "etcd")
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
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
        let record = await reloader.reload(trigger: .fleet, fleetRevision: state.revision)
        guard record.outcome != .rejected else { return false }
        fleet.cacheLater(state)
        return true
    }
}
