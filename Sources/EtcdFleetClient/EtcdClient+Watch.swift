#if Fleet
    import GRPCCore
    import Locking
    import Logging

    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// Watches: etcd's Watch stream with progress notifications, a stalled member noticed by its
    /// silence, and one cut off from its leader by a rare look at its status.
    extension EtcdClient {
        /// What a watch reports.
        package enum WatchUpdate: Sendable, Equatable {
            /// The watch is in place: every change after `revision` will follow.
            case created(revision: Int64)
            /// Changes of one revision: each key's new value, or `nil` for a deleted key.
            case changes(revision: Int64, [EtcdChange])
            /// The revision asked for was compacted away: read everything again, then watch from there.
            case compacted(revision: Int64)
        }

        /// One key's change.
        package struct EtcdChange: Sendable, Equatable {
            /// The key.
            package var key: String
            /// The new value, or `nil` if the key was deleted.
            package var value: Data?
            /// The revision of the change.
            package var modRevision: Int64

            /// A change of `key` to `value` (`nil`: deleted) at `modRevision`.
            package init(key: String, value: Data?, modRevision: Int64) {
                self.key = key
                self.value = value
                self.modRevision = modRevision
            }
        }

        /// Watches every key under `prefix` from `revision` on, on the current endpoint (tests and
        /// benchmarks; a fleet watches its documents only, with ``watchFleet(from:)``).
        package func watch(prefix: String, from revision: Int64) -> AsyncThrowingStream<WatchUpdate, any Error> {
            watch(key: prefix.etcdKey, rangeEnd: rangeEnd(ofPrefix: prefix), from: revision, name: prefix)
        }

        /// Watches the fleet's documents from `revision` on, on the current endpoint: the keys from
        /// `PREFIX/Environments.plist` to the end of `PREFIX/Environments.plist.d/`, in one watch.
        ///
        /// One watch, not one per part of the layout: etcd sends the changes of one revision to one
        /// watch in one message, so a transaction that changes the main document and a drop-in
        /// arrives whole (two watches would deliver halves with nothing in etcd 3.4 to say that the
        /// other half is coming), and "resume after the last revision applied" stays exact. Keys in
        /// that span that are not documents (`Environments.plist.d/old/x.plist`) come with it and
        /// are ignored; no other key under the prefix does.
        ///
        /// The stream ends with an error when the endpoint goes away or stalls (call
        /// ``rotate(after:)`` and watch again from the last revision applied), or with one whose
        /// `responseTooLarge` is set when one message is larger than the documents may be together
        /// (read the fleet whole, then watch from there); it ends when the task iterating it is
        /// cancelled.
        package func watchFleet(from revision: Int64) -> AsyncThrowingStream<WatchUpdate, any Error> {
            let prefix = configuration.prefix
            return watch(
                key: FleetState.mainKey(prefix: prefix).etcdKey,
                rangeEnd: rangeEnd(ofPrefix: FleetState.dropInDirectory(prefix: prefix)), from: revision,
                name: "the fleet's documents under \(prefix)")
        }

        /// The longest watch message read: what all the documents may hold, and 1 MiB for the rest
        /// of the message.
        private var maximumWatchMessageSize: Int { configuration.limits.totalBytes + (1 << 20) }

        /// How late a watch's check of its member's silence may wake (the timer's tolerance).
        private static let silenceCheckTolerance: Duration = .milliseconds(250)

        /// How many request timeouts pass between two looks at the watched member's status (its
        /// leader): 6, every 30 s with the default timeout of 5 s.
        package static let leaderCheckPeriods = 6

        /// A watch of the keys from `key` to `rangeEnd`, on the current endpoint, that asks etcd
        /// for progress notifications (`progress_notify`).
        ///
        /// A member sends a progress notification on an idle watch every
        /// `--experimental-watch-progress-notify-interval` (10 minutes unless set; set it below half
        /// of `requestTimeout`, as a fleet's members should, and the client sends nothing while
        /// idle). A watch that hears nothing, no change and no notification, for half of
        /// `requestTimeout` asks for one itself (a progress request on the same stream: the member
        /// answers from memory, with no read); a watch that still hears nothing by `requestTimeout`
        /// fails as the endpoint's unavailability. So a member stopped with its connections open
        /// (SIGSTOP, a hung disk, a network that drops packets) is left within `requestTimeout`
        /// (5 s by default), and the caller moves to the next endpoint.
        ///
        /// A member cut off from its cluster's leader still sends progress notifications, but no
        /// new changes: every ``leaderCheckPeriods`` request timeouts the watch asks its member
        /// for its status (Maintenance.Status, answered from the member's memory), and leaves a
        /// member that has no leader or does not answer.
        private func watch(key: Data, rangeEnd: Data, from revision: Int64, name: String)
            -> AsyncThrowingStream<WatchUpdate, any Error>
        {
            let endpoint = currentEndpoint
            let operation = "watch \(name) from revision \(revision)"
            let create = Self.createRequest(key: key, rangeEnd: rangeEnd, from: revision)
            return AsyncThrowingStream { continuation in
                let task = Task {
                    // When the member last sent anything on the watch.
                    let heard = Locked(ContinuousClock.now)
                    let (asks, asker) = AsyncStream<Void>.makeStream()
                    do {
                        let connection = try self.connection(to: endpoint, operation: operation)
                        let token = try await self.token(for: endpoint, on: connection)
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                try await self.receive(
                                    create, on: connection, token: token, operation: operation, heard: heard,
                                    asks: asks, into: continuation)
                            }
                            group.addTask {
                                try await self.listen(
                                    on: endpoint, watching: operation, heard: heard, asker: asker)
                            }
                            // The first to end (the stream, with an error; the check, with a stall)
                            // ends the other.
                            try await group.next()
                            group.cancelAll()
                        }
                        continuation.finish()
                    } catch {
                        asker.finish()
                        let failure = self.failure(
                            error, operation, endpoint, maximumResponseSize: self.maximumWatchMessageSize)
                        self.forgetToken(of: endpoint, ifRejectedBy: failure)
                        continuation.finish(throwing: failure)
                    }
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }

        /// A watch of the keys from `key` to `rangeEnd` from `revision` on, with progress notifications.
        private static func createRequest(key: Data, rangeEnd: Data, from revision: Int64)
            -> Etcdserverpb_WatchCreateRequest
        {
            var create = Etcdserverpb_WatchCreateRequest()
            create.key = key
            create.rangeEnd = rangeEnd
            create.startRevision = revision
            create.progressNotify = true
            return create
        }

        /// Runs the watch stream on `connection` and yields what its messages say, noting in `heard`
        /// when each arrives; sends a progress request for each element of `asks`. Ends with an
        /// error.
        private func receive(
            _ create: Etcdserverpb_WatchCreateRequest, on connection: EtcdConnection, token: String?,
            operation: String, heard: Locked<ContinuousClock.Instant>, asks: AsyncStream<Void>,
            into continuation: AsyncThrowingStream<WatchUpdate, any Error>.Continuation
        ) async throws {
            let endpoint = connection.endpoint
            var request = Etcdserverpb_WatchRequest()
            request.requestUnion = .createRequest(create)
            var progress = Etcdserverpb_WatchRequest()
            progress.requestUnion = .progressRequest(Etcdserverpb_WatchProgressRequest())
            try await connection.watch.watch(
                metadata: Self.metadata(token),
                options: callOptions(maximumResponseSize: maximumWatchMessageSize, timeout: false),
                requestProducer: { [request, progress] writer in
                    try await writer.write(request)
                    // The request stream stays open while the watch lasts.
                    for await _ in asks { try await writer.write(progress) }
                },
                onResponse: { response in
                    for try await message in response.messages {
                        heard.withLock { $0 = .now }
                        if let update = try Self.update(from: message, operation, endpoint) {
                            continuation.yield(update)
                        }
                    }
                    throw EtcdError(operation: operation, endpoint: endpoint, message: "the watch stream ended")
                })
        }

        /// What one message of a watch says: `nil` for a progress notification.
        static func update(from message: Etcdserverpb_WatchResponse, _ operation: String, _ endpoint: String)
            throws(EtcdError) -> WatchUpdate?
        {
            if message.compactRevision > 0 { return .compacted(revision: message.compactRevision) }
            if message.canceled {
                throw EtcdError(
                    operation: operation, endpoint: endpoint,
                    message:
                        "etcd cancelled the watch: \(message.cancelReason.isEmpty ? "no reason given" : message.cancelReason)"
                )
            }
            if message.created { return .created(revision: message.header.revision) }
            let changes = message.events.map { event in
                EtcdChange(
                    key: String(decoding: event.kv.key, as: UTF8.self),
                    value: event.type == .delete ? nil : event.kv.value, modRevision: event.kv.modRevision)
            }
            guard !changes.isEmpty else { return nil }
            return .changes(revision: changes.map(\.modRevision).max() ?? message.header.revision, changes)
        }

        /// Runs beside a watch on `endpoint` until it throws: asks for a progress notification
        /// (through `asker`) once the member has been silent for half of `requestTimeout`, throws a
        /// stall when it has been silent for all of it, and looks at the member's leader every
        /// ``leaderCheckPeriods`` request timeouts.
        ///
        /// - Parameter heard: When the member last sent anything on the watch.
        private func listen(
            on endpoint: String, watching operation: String, heard: Locked<ContinuousClock.Instant>,
            asker: AsyncStream<Void>.Continuation
        ) async throws {
            let limit = configuration.requestTimeout
            var asked: ContinuousClock.Instant?
            var nextLeaderCheck = ContinuousClock.now + limit * Self.leaderCheckPeriods
            while true {
                // Wakes when there is something to do: half of `limit` after the last message (to
                // ask for a progress notification), `limit` after it once asked (to leave), or the
                // leader check; with a message since, it only sleeps again. (It used to look every
                // 250 ms: 40,000 wake-ups a second in a process of 10,000 simulated hosts, which
                // starved their watches into false stalls.)
                let heardLast = heard.withLock { $0 }
                let askedSince = asked.map { $0 >= heardLast } ?? false
                let wake = min(heardLast + (askedSince ? limit : limit / 2), nextLeaderCheck)
                try await Task.sleep(until: wake, tolerance: Self.silenceCheckTolerance, clock: .continuous)
                let now = ContinuousClock.now
                let last = heard.withLock { $0 }
                if now - last >= limit {
                    throw Self.stalled(
                        operation, on: endpoint,
                        "nothing on the watch for \(Self.seconds(now - last)), not even the progress notification asked for: the member is stalled"
                    )
                }
                if now - last >= limit / 2, asked.map({ $0 < last }) ?? true {
                    asked = now
                    asker.yield()
                }
                if now >= nextLeaderCheck {
                    try await checkLeader(of: endpoint, watching: operation)
                    nextLeaderCheck = ContinuousClock.now + limit * Self.leaderCheckPeriods
                }
            }
        }

        /// Asks `endpoint` for its status; throws a stall when it has no leader or does not answer.
        /// A member that refuses (a user whose role does not allow it) is not checked.
        private func checkLeader(of endpoint: String, watching operation: String) async throws(EtcdError) {
            let status: Etcdserverpb_StatusResponse
            do {
                status = try await callOnce(endpoint, "ask \(endpoint) for its status") {
                    connection, metadata, options in
                    try await connection.maintenance.status(
                        Etcdserverpb_StatusRequest(), metadata: metadata, options: options)
                }
            } catch  where error.endpointUnavailable {
                throw Self.stalled(
                    operation, on: endpoint, "the member does not answer for its status (\(error.message))")
            } catch {
                logger.debug(
                    "cannot ask the etcd member for its leader",
                    metadata: ["etcd_endpoint": "\(endpoint)", "error": "\(error)"])
                return
            }
            guard status.leader != 0 else {
                throw Self.stalled(
                    operation, on: endpoint,
                    "the member has no leader (raft term \(status.raftTerm)): it is cut off from its cluster, and its watch would bring nothing new"
                )
            }
        }

        /// A token etcd no longer knows (the cluster restarted, or the token expired, and etcd
        /// cancelled the watch for it): the next watch on this endpoint authenticates again rather
        /// than present the same token, and fail, forever.
        private func forgetToken(of endpoint: String, ifRejectedBy failure: EtcdError) {
            guard failure.isAuthenticationFailure, configuration.userName != nil else { return }
            cache(token: nil, for: endpoint)
        }

        /// A watch on `endpoint` that stalled, as `message` says: the endpoint counts as
        /// unavailable, so the next one takes over.
        private static func stalled(_ operation: String, on endpoint: String, _ message: String) -> EtcdError {
            var error = EtcdError(
                operation: operation, endpoint: endpoint, message: message,
                hint: "the next endpoint takes over, from the last revision applied")
            error.endpointUnavailable = true
            return error
        }
    }
#endif
