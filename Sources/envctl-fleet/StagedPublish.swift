#if Fleet
    import Environments
    import EnvironmentsControl
    import EtcdFleetClient
    import Locking

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    #if canImport(Glibc)
        import Glibc
    #endif

    /// Drives a staged publish (``FleetRollout``) from its stage in force to its end: waits until
    /// every host of the stage runs the candidate and keeps renewing its status for the settle
    /// time, widens, and at 100% writes the candidate as the fleet's documents; rolls every host
    /// back to the fleet's documents when a host of a stage rejects the candidate, stops renewing,
    /// or does not apply it in time.
    ///
    /// What it knows of the hosts is their status keys (`PREFIX/.status/HOST`), read once and then
    /// watched; what it knows of the publish is the record, read again every second, so that an
    /// `envctl publish --abort` from elsewhere, or another envctl that resumed the publish, stops it.
    struct StagedPublish {
        let configuration: EtcdConfiguration
        let client: EtcdClient
        /// The record as this envctl last wrote or read it, and the revision of that write.
        var record: FleetRollout
        var recordRevision: Int64
        /// The fleet's own documents and their revisions, as validated: a widening or the final
        /// write happens only while they are unchanged.
        let ownDocuments: [String: Int64]
        /// How long a stage's hosts may take to apply the candidate.
        let stageTimeout: Duration

        /// How a publish ended.
        enum Ending {
            /// Written as the fleet's documents at this revision.
            case finished(Int64)
            /// Held after a stage below 100%, for `--resume`.
            case held
            /// Rolled back (or stopped) for these reasons.
            case failed([String])
        }

        private var prefix: String { configuration.prefix }
        private var recordKey: String { FleetRollout.key(prefix: prefix) }

        /// Runs the publish from the stage in force; `widenFirst` when that stage was not written yet.
        mutating func run(widenFirst: Bool) async throws(EtcdError) -> Ending {
            let hosts = HostStatuses(client: client, prefix: prefix)
            let follower = Task { await hosts.follow() }
            defer { follower.cancel() }
            guard await hosts.waitUntilRead() else { return .failed(["the hosts' status keys cannot be read"]) }
            var index = record.stage
            var widen = widenFirst
            while true {
                if widen {
                    var next = record
                    next.widen(to: index, reporting: hosts.reportingHosts())
                    next.updated = Date()
                    if case .hosts(let named) = next.steps[index] {
                        let missing = named.filter { !hosts.reportingHosts().contains($0) }
                        if !missing.isEmpty {
                            return try await hold(
                                "stage \(index + 1): \(missing.joined(separator: ", ")) report\(missing.count == 1 ? "s" : "") no status under \(FleetHostStatus.directory(prefix: prefix)); check the host ids with envctl fleet status"
                            )
                        }
                    }
                    guard let written = try await write(next) else { return await stoppedByOther() }
                    record = next
                    recordRevision = written
                }
                let members = hosts.reportingHosts().filter(record.includes(host:)).sorted()
                say(
                    "stage \(index + 1) of \(record.steps.count) (\(record.steps[index])): \(members.count) of \(hosts.reportingHosts().count) hosts: \(Self.list(members))"
                )
                switch await waitForStage(index, hosts) {
                case .settled:
                    break
                case .stopped:
                    return await stoppedByOther()
                case .failed(let reasons):
                    for reason in reasons { say("stage \(index + 1) failed: \(reason)") }
                    return .failed(reasons + (try await rollBack(hosts)))
                }
                if record.cutoff == FleetRollout.everyHost {
                    return try await finish(hosts)
                }
                if index + 1 == record.steps.count {
                    var next = record
                    next.held = true
                    next.updated = Date()
                    guard let written = try await write(next) else { return await stoppedByOther() }
                    record = next
                    recordRevision = written
                    say(
                        "held at stage \(index + 1) (\(record.steps[index])): envctl publish --resume --stage 100% widens it, envctl publish --abort rolls it back"
                    )
                    return .held
                }
                index += 1
                widen = true
            }
        }

        /// Rolls the publish back: deletes the candidate and the record, so that every host returns
        /// to the fleet's documents; waits (up to 30 s) until the hosts that ran the candidate say
        /// so. Returns what did not go back.
        mutating func rollBack(_ hosts: HostStatuses? = nil) async throws(EtcdError) -> [String] {
            let removed = try await client.commit(
                puts: [], deletes: [], deletingPrefixes: [FleetRollout.directory(prefix: prefix)], prefix: prefix,
                ifUnchangedSince: nil, expecting: [recordKey: recordRevision])
            guard let removed else {
                say("the staged publish changed meanwhile (another envctl resumed or aborted it): not rolled back here")
                return ["the staged publish was changed by another envctl"]
            }
            say(
                "rolled back at revision \(removed): every host returns to the fleet's documents of revision \(record.base) (fingerprint \(record.baseFingerprint))"
            )
            let watched: HostStatuses
            var follower: Task<Void, Never>?
            if let hosts {
                watched = hosts
            } else {
                watched = HostStatuses(client: client, prefix: prefix)
                let started = watched
                follower = Task { await started.follow() }
            }
            defer { follower?.cancel() }
            _ = await watched.waitUntilRead()
            let deadline = ContinuousClock.now + .seconds(30)
            var behind: [String] = []
            repeat {
                behind = watched.statuses().filter { $0.value?.fingerprint == record.fingerprint }.map(\.key).sorted()
                if behind.isEmpty { break }
                try? await Task.sleep(for: .milliseconds(250))
            } while ContinuousClock.now < deadline
            if behind.isEmpty {
                say("every host that reports runs the fleet's documents again")
                return []
            }
            return [
                "\(Self.list(behind)) still run\(behind.count == 1 ? "s" : "") the candidate 30 s after the rollback"
            ]
        }

        private enum StageResult {
            case settled
            case stopped
            case failed([String])
        }

        /// Waits until every host of stage `index` runs the candidate and has kept renewing for the
        /// settle time (at least the largest TTL among them, so that one that stopped renewing has
        /// dropped out).
        private func waitForStage(_ index: Int, _ hosts: HostStatuses) async -> StageResult {
            let clock = ContinuousClock()
            let started = clock.now
            var settledSince: ContinuousClock.Instant?
            var seen: Set<String> = []
            var applied: Set<String> = []
            var lastRecordCheck = clock.now
            while true {
                let statuses = hosts.statuses()
                let members = statuses.keys.filter(record.includes(host:))
                seen.formUnion(members)
                let (failures, waiting) = survey(
                    statuses, members: members, seen: seen, stage: index, applied: &applied)
                if !failures.isEmpty { return .failed(failures) }
                if waiting.isEmpty && !members.isEmpty {
                    let settle = settleTime(of: members, statuses)
                    if settledSince == nil {
                        settledSince = clock.now
                        say(
                            "stage \(index + 1): all \(members.count) run the candidate; settling \(Self.seconds(settle))"
                        )
                    } else if clock.now - settledSince! >= settle {
                        say("stage \(index + 1) settled")
                        return .settled
                    }
                } else {
                    settledSince = nil
                    if clock.now - started > stageTimeout {
                        return .failed(
                            (members.isEmpty ? ["no host of the stage reports"] : waiting).map {
                                "\($0): the candidate was not applied within \(Self.seconds(stageTimeout))"
                            })
                    }
                }
                if clock.now - lastRecordCheck >= .seconds(1) {
                    lastRecordCheck = clock.now
                    if await recordChangedElsewhere() { return .stopped }
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }

        /// Where the hosts of stage `index` stand: the failures (a host seen in the stage that
        /// stopped renewing its status, one that rejected the candidate) and the hosts still waited
        /// for. Says so when a host runs the candidate for the first time (then in `applied`).
        private func survey(
            _ statuses: [String: FleetHostStatus?], members: [String], seen: Set<String>, stage index: Int,
            applied: inout Set<String>
        ) -> (failures: [String], waiting: [String]) {
            var failures: [String] = []
            for host in seen.sorted() where statuses[host] == nil {
                failures.append(
                    "\(host) stopped renewing its status (its lease expired, or the daemon stopped) while in the stage")
            }
            var waiting: [String] = []
            for host in members.sorted() {
                guard let status = statuses[host] ?? nil else {
                    waiting.append("\(host): its status cannot be read")
                    continue
                }
                if let last = status.last, last.outcome == .rejected, last.fingerprint == record.fingerprint {
                    failures.append("\(host) rejected the candidate: \(last.error ?? "no reason given")")
                } else if status.fingerprint == record.fingerprint {
                    if applied.insert(host).inserted { say("stage \(index + 1): \(host) runs the candidate") }
                } else {
                    waiting.append("\(host) runs revision \(status.revision) (fingerprint \(status.fingerprint))")
                }
            }
            return (failures, waiting)
        }

        /// How long a stage's hosts must keep running the candidate: the record's settle time, and
        /// at least the largest TTL among them, so that one that stopped renewing has dropped out.
        private func settleTime(of members: [String], _ statuses: [String: FleetHostStatus?]) -> Duration {
            let ttl = members.compactMap { statuses[$0]??.ttl }.max() ?? 0
            return Duration.seconds(max(record.settle, ttl))
        }

        /// Whether the record was deleted (aborted elsewhere) or rewritten (resumed elsewhere): then
        /// this envctl stops. Unreachable, it was not: go on waiting; the hosts' statuses say what
        /// happens meanwhile.
        private func recordChangedElsewhere() async -> Bool {
            guard let read = try? await client.range(prefix: recordKey) else { return false }
            return read.keyValues.first(where: { $0.key == recordKey })?.modRevision != recordRevision
        }

        /// Writes the candidate as the fleet's documents and deletes the publish, in one transaction
        /// that holds only while the fleet's documents and the record are as this envctl left them.
        private mutating func finish(_ hosts: HostStatuses) async throws(EtcdError) -> Ending {
            let state = try await client.readFleet()
            let own = state.effective(forHost: nil, limits: configuration.limits)
            guard own.fingerprint == record.baseFingerprint else {
                let reason =
                    "the fleet's own documents changed during the staged publish (fingerprint \(own.fingerprint), not \(record.baseFingerprint)): written outside envctl publish"
                say(reason)
                return .failed([reason] + (try await rollBack(hosts)))
            }
            var puts: [(key: String, value: Data)] = []
            var names: Set<String> = []
            for name in record.documents {
                let key = prefix + name
                names.insert(key)
                guard let entry = state.entries[FleetRollout.candidateKey(for: key, prefix: prefix)] else {
                    let reason = "the candidate lacks \(key): it was changed outside envctl publish"
                    return .failed([reason] + (try await rollBack(hosts)))
                }
                if own.entries[key]?.value != entry.value { puts.append((key, entry.value)) }
            }
            let deletes = own.entries.keys.filter { !names.contains($0) }.sorted()
            var expecting = own.entries.mapValues(\.modRevision)
            expecting[recordKey] = recordRevision
            guard
                let written = try await client.commit(
                    puts: puts, deletes: deletes, deletingPrefixes: [FleetRollout.directory(prefix: prefix)],
                    prefix: prefix, ifUnchangedSince: record.base, expecting: expecting)
            else {
                return await stoppedByOther()
            }
            say(
                "published the candidate (\(record.documents.map { prefix + $0 }.joined(separator: ", "))) to every host at revision \(written)"
            )
            return .finished(written)
        }

        /// Stops after a stage because of `reason`, keeping the stage in force for `--resume`.
        private mutating func hold(_ reason: String) async throws(EtcdError) -> Ending {
            var next = record
            next.held = true
            next.updated = Date()
            if let written = try await write(next) {
                record = next
                recordRevision = written
            }
            say(
                "\(reason); the publish is held at stage \(record.stage + 1): envctl publish --resume --stage STEPS goes on, envctl publish --abort rolls it back"
            )
            return .failed([reason])
        }

        private func stoppedByOther() async -> Ending {
            let reason =
                "the staged publish was aborted or taken over by another envctl (its record under \(recordKey) changed); stopping here"
            say(reason)
            return .failed([reason])
        }

        /// Writes `next` as the record, only while the record and the fleet's documents are as
        /// read; the write's revision, or `nil` when either changed.
        private func write(_ next: FleetRollout) async throws(EtcdError) -> Int64? {
            let value: Data
            do { value = try next.encoded() } catch {
                throw EtcdError(operation: "write \(recordKey)", message: error.description, hint: nil)
            }
            var expecting = ownDocuments
            expecting[recordKey] = recordRevision
            return try await client.commit(
                puts: [(recordKey, value)], deletes: [], prefix: prefix, ifUnchangedSince: record.base,
                expecting: expecting)
        }

        /// Prints a line of progress at once (envctl may be stopped at any time; what it said
        /// should be out).
        func say(_ line: String) {
            printLine(line)
            fflush(nil)  // every output stream
        }

        static func list(_ hosts: [String]) -> String {
            hosts.count <= 10 ? hosts.joined(separator: ", ") : hosts.prefix(10).joined(separator: ", ") + ", …"
        }

        static func seconds(_ duration: Duration) -> String {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return seconds == seconds.rounded() ? "\(Int(seconds)) s" : FleetNumbers.oneDecimal(seconds) + " s"
        }
    }

    /// The fleet's host statuses (`PREFIX/.status/`), read once and then kept up to date by a watch.
    final class HostStatuses: Sendable {
        private let client: EtcdClient
        private let directory: String
        /// By host id: the status, or `nil` when its value is not one; `nil` before the first read.
        private let table = Locked<[String: FleetHostStatus?]?>(nil)

        /// The most status keys read: as `envctl fleet status`.
        static let maximumHosts = FleetStatusCommand.maximumHosts

        init(client: EtcdClient, prefix: String) {
            self.client = client
            directory = FleetHostStatus.directory(prefix: prefix)
        }

        /// The hosts with a status key now.
        func statuses() -> [String: FleetHostStatus?] { table.withLock { $0 ?? [:] } }

        /// The ids of the hosts with a status key now.
        func reportingHosts() -> [String] { Array(statuses().keys) }

        /// Waits (up to 30 s) for the first read; whether it came.
        func waitUntilRead() async -> Bool {
            for _ in 0..<300 {
                if table.withLock({ $0 != nil }) { return true }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return false
        }

        /// Reads the statuses, then follows their changes, until cancelled; after a failure, reads
        /// again from the next endpoint.
        func follow() async {
            while !Task.isCancelled {
                let endpoint = client.currentEndpoint
                do {
                    let (keyValues, revision) = try await readAll()
                    table.withLock { table in
                        table = [:]
                        for keyValue in keyValues {
                            table![host(of: keyValue.key)] = FleetHostStatus.decode(keyValue.value)
                        }
                    }
                    watching: for try await update in client.watch(prefix: directory, from: revision + 1) {
                        switch update {
                        case .created: continue
                        case .compacted: break watching  // read them whole again
                        case .changes: break
                        }
                        guard case .changes(_, let changes) = update else { continue }
                        table.withLock { table in
                            for change in changes {
                                table?[host(of: change.key)] = change.value.map { FleetHostStatus.decode($0) }
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    client.rotate(after: endpoint)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }

        private func readAll() async throws(EtcdError) -> ([EtcdKeyValue], Int64) {
            let read = try await client.range(prefix: directory, limit: Self.maximumHosts, maximumBytes: 64 << 20)
            return (read.keyValues, read.revision)
        }

        private func host(of key: String) -> String { String(key.dropFirst(directory.count)) }
    }
#endif
