#if Fleet
    import Environments
    import EtcdFleetClient

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// `envctl publish --stage`, `--resume` and `--abort`: a staged publish (``FleetRollout``,
    /// driven by ``StagedPublish``).
    extension Publish {
        /// The steps of every `--stage` given, in order.
        static func steps(_ values: [String]) throws -> [FleetRollout.Step] {
            do {
                return try FleetRollout.Step.parse(values.joined(separator: ","))
            } catch {
                throw Failure("--stage: \(error)")
            }
        }

        /// A duration as `--settle` and `--stage-timeout` take it: `90`, `90s`, `500ms`, `2m`, `1h`.
        static func duration(_ text: String, option: String) throws -> Duration {
            let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            let trimmed = text.trimmingWhitespace()
            let unit = units.first { trimmed.hasSuffix($0.suffix) && Double(trimmed.dropLast($0.suffix.count)) != nil }
            let number = Double(unit.map { trimmed.dropLast($0.suffix.count) } ?? Substring(trimmed))
            guard let number, number >= 0, number <= 7 * 86400 else {
                throw Failure("\(option) '\(text)' is not a duration of up to a week, such as 90s, 500ms, 2m or 1h")
            }
            return .milliseconds(Int64(number * (unit?.seconds ?? 1) * 1000))
        }

        /// What to say when a staged publish is in progress and another publish is asked for.
        static func inProgress(_ rollout: FleetRollout?, _ configuration: EtcdConfiguration) -> String {
            let what =
                rollout.map {
                    "a staged publish is in progress (started by \($0.startedBy) at \($0.started.formatted(.iso8601)), "
                        + "stage \($0.stage + 1) of \($0.steps.count): \($0.steps[$0.stage])\($0.held ? ", held" : ""))"
                }
                ?? "a staged publish is in progress (its record at \(FleetRollout.key(prefix: configuration.prefix)) cannot be read)"
            return
                "not published: \(what); envctl publish --resume goes on with it, envctl publish --abort rolls it back"
        }

        /// Writes `state`'s documents (validated against `validated`) as a staged publish's
        /// candidate, with the first stage, and drives it to its end.
        func stagedPublish(
            _ state: FleetState, steps: [FleetRollout.Step], validated: Int64, baseFingerprint: String,
            expected: [String: Int64], environments: [String], _ configuration: EtcdConfiguration
        ) throws {
            let prefix = configuration.prefix
            let settleTime = try Self.duration(settle ?? "60s", option: "--settle")
            let timeout = try Self.duration(stageTimeout, option: "--stage-timeout")
            let keys = state.documentKeys
            guard keys.count < EtcdClient.maximumExpectedKeys else {
                throw Failure(
                    "not published: a staged publish writes every document again under its candidate, at most \(EtcdClient.maximumExpectedKeys - 1) in one transaction; the fleet would have \(keys.count)"
                )
            }
            let record = FleetRollout(
                id: UUID().uuidString, base: validated, baseFingerprint: baseFingerprint,
                fingerprint: state.fingerprint,
                documents: keys.map { String($0.dropFirst(prefix.count)) }, steps: steps,
                settle: Int(settleTime.components.seconds), startedBy: Self.operatorName, started: Date())
            let candidate = keys.map {
                (key: FleetRollout.candidateKey(for: $0, prefix: prefix), value: state.entries[$0]!.value)
            }
            let recordKey = FleetRollout.key(prefix: prefix)
            let expecting = expected.merging([recordKey: 0]) { old, _ in old }
            let ending = try FleetOptions.blocking { client throws(EtcdError) -> StagedPublish.Ending in
                let first: FleetRollout
                switch try await Self.firstStage(of: record, steps: steps, client: client, prefix: prefix) {
                case .success(let chosen): first = chosen
                case .failure(let refusal): return .failed([refusal.message])
                }
                let value: Data
                do { value = try first.encoded() } catch {
                    return .failed(["\(error); nothing was written"])
                }
                guard
                    let written = try await client.commit(
                        puts: candidate + [(recordKey, value)], deletes: [], prefix: prefix,
                        ifUnchangedSince: validated,
                        expecting: expecting)
                else {
                    return .failed([
                        "the fleet's documents under \(prefix) changed after revision \(validated), which was validated, or a staged publish began; nothing was written: run publish again"
                    ])
                }
                var publish = StagedPublish(
                    configuration: configuration, client: client, record: first, recordRevision: written,
                    ownDocuments: expected, stageTimeout: timeout)
                publish.say(
                    "staged publish \(first.id): \(keys.joined(separator: ", ")) validated for \(environments.joined(separator: ", ")) against revision \(validated), written as the candidate at revision \(written)"
                )
                return try await publish.run(widenFirst: false)
            }(configuration)
            try Self.conclude(ending)
        }

        /// Why a staged publish did not start; nothing was written.
        private struct NothingWritten: Error {
            let message: String
        }

        /// `record` with its first stage chosen among the hosts that report their status now; none
        /// reporting, or a host the first step names that does not, is a refusal.
        private static func firstStage(
            of record: FleetRollout, steps: [FleetRollout.Step], client: EtcdClient, prefix: String
        ) async throws(EtcdError) -> Result<FleetRollout, NothingWritten> {
            let directory = FleetHostStatus.directory(prefix: prefix)
            let reporting = try await client.range(
                prefix: directory, limit: HostStatuses.maximumHosts, maximumBytes: 64 << 20
            ).keyValues.map { String($0.key.dropFirst(directory.count)) }
            guard !reporting.isEmpty else {
                return .failure(
                    NothingWritten(
                        message:
                            "no host reports its status under \(directory): a staged publish follows the hosts' status keys (on unless ENVIRONMENTS_ETCD_STATUS=off); nothing was written"
                    ))
            }
            var first = record
            first.widen(to: 0, reporting: reporting)
            if case .hosts(let named) = steps[0], let missing = named.first(where: { !reporting.contains($0) }) {
                return .failure(
                    NothingWritten(message: "\(missing) reports no status under \(directory); nothing was written"))
            }
            return .success(first)
        }

        /// `--resume`: goes on with the staged publish in progress from its stage in force.
        func resumePublish(_ configuration: EtcdConfiguration) throws {
            let (state, entry) = try Self.publishInProgress(configuration)
            guard var record = state.rollout else {
                throw Failure(
                    "the staged publish's record at \(FleetRollout.key(prefix: configuration.prefix)) cannot be read; envctl publish --abort removes it"
                )
            }
            if !stages.isEmpty { record.steps = Array(record.steps[...record.stage]) + (try Self.steps(stages)) }
            if let settle { record.settle = Int(try Self.duration(settle, option: "--settle").components.seconds) }
            guard record.steps.count <= FleetRollout.maximumSteps else {
                throw Failure("--stage: at most \(FleetRollout.maximumSteps) steps in all")
            }
            if record.held, record.stage + 1 == record.steps.count, record.cutoff != FleetRollout.everyHost {
                throw Failure(
                    "the staged publish is held at its last step (\(record.steps[record.stage])): give the next with --stage, for example --resume --stage 100%"
                )
            }
            let own = state.effective(forHost: nil, limits: configuration.limits)
            let timeout = try Self.duration(stageTimeout, option: "--stage-timeout")
            let held = record.held
            let resumed = record
            printLine(
                "resuming staged publish \(record.id) at stage \(record.stage + 1) of \(record.steps.count) (\(record.steps[record.stage]))"
            )
            let ending = try FleetOptions.blocking { client throws(EtcdError) -> StagedPublish.Ending in
                var publish = StagedPublish(
                    configuration: configuration, client: client, record: resumed, recordRevision: entry.modRevision,
                    ownDocuments: own.entries.mapValues(\.modRevision), stageTimeout: timeout)
                guard own.fingerprint == resumed.baseFingerprint else {
                    let reason =
                        "the fleet's own documents changed during the staged publish (fingerprint \(own.fingerprint), not \(resumed.baseFingerprint)): written outside envctl publish"
                    publish.say(reason)
                    return .failed([reason] + (try await publish.rollBack()))
                }
                if held {
                    // The held stage is good: go on with the next.
                    publish.record.held = false
                    publish.record.stage += 1
                    return try await publish.run(widenFirst: true)
                }
                return try await publish.run(widenFirst: false)
            }(configuration)
            try Self.conclude(ending)
        }

        /// `--abort`: rolls the staged publish in progress back.
        func abortPublish(_ configuration: EtcdConfiguration) throws {
            let (state, entry) = try Self.publishInProgress(configuration)
            // An unreadable record is removed too; no host runs a candidate it cannot read.
            let record =
                state.rollout
                ?? FleetRollout(
                    id: "?", base: state.configurationRevision, baseFingerprint: state.fingerprint, fingerprint: "",
                    documents: [], steps: [.percent(100)], settle: 0, startedBy: "?", started: Date())
            let left = try FleetOptions.blocking { client throws(EtcdError) -> [String] in
                var publish = StagedPublish(
                    configuration: configuration, client: client, record: record, recordRevision: entry.modRevision,
                    ownDocuments: [:], stageTimeout: .zero)
                return try await publish.rollBack()
            }(configuration)
            if !left.isEmpty { throw Failure(left.joined(separator: "; ")) }
        }

        /// The fleet as read now and the staged publish's record key, which must be there.
        private static func publishInProgress(_ configuration: EtcdConfiguration) throws -> (
            FleetState, FleetState.Entry
        ) {
            let state = try FleetOptions.read(configuration, acceptingViolation: true)
            guard let entry = state.entries[FleetRollout.key(prefix: configuration.prefix)] else {
                throw Failure("no staged publish in progress under \(configuration.prefix)")
            }
            return (state, entry)
        }

        /// Exits as `ending` says: 0 when finished or held, 1 with the reasons when it failed.
        private static func conclude(_ ending: StagedPublish.Ending) throws {
            if case .failed(let reasons) = ending {
                throw Failure("staged publish failed: " + reasons.joined(separator: "; "))
            }
        }

        /// Who runs envctl, for the record: `user@host`.
        static var operatorName: String {
            "\(ProcessInfo.processInfo.environment["SUDO_USER"] ?? ProcessInfo.processInfo.userName)@\(ProcessInfo.processInfo.hostName)"
        }
    }
#endif
