#if Fleet
    import AsyncHTTPClient
    import Environments
    import Foundation
    import Locking
    import Logging
    import NIOCore
    import NIOHTTP1
    import NIOSSL

    /// A client for etcd's v3 JSON gateway (`/v3/kv/range`, `/v3/watch`, `/v3/kv/txn`), over
    /// AsyncHTTPClient.
    ///
    /// It talks to one endpoint at a time, starting with the one this host's machine id picks
    /// (``firstEndpoint(among:identity:)``), so that a fleet's hosts spread over the members rather
    /// than all watching the first. When that member cannot be reached (refused, reset,
    /// timed out, or "no leader"), the next endpoint takes over for this call and every later one;
    /// a watch that ends that way, or whose member stalls, is resumed by its caller from the last
    /// revision it applied. Every request has a deadline (`requestTimeout`).
    /// With a user configured, it authenticates once per endpoint and again when etcd says the
    /// token expired.
    package final class EtcdClient: Sendable {
        /// How to reach etcd.
        package let configuration: EtcdConfiguration
        private let http: HTTPClient
        let logger: Logger

        private struct State {
            var endpointIndex = 0
            var tokens: [String: String] = [:]
        }
        private let state: Locked<State>

        /// The largest answer read into memory by default (transactions, errors, tools' ranges): a
        /// bound on what a misbehaving endpoint can make the daemon hold. The fleet's documents are
        /// read with bounds of their own (``FleetLimits``).
        static let maximumResponseSize = 64 << 20

        /// A client for `configuration`; nothing is sent until the first call.
        ///
        /// - Throws: ``EtcdError`` if a TLS file cannot be loaded.
        package init(configuration: EtcdConfiguration, logger: Logger = Logger(label: "EnvironmentsEtcd"))
            throws(EtcdError)
        {
            self.configuration = configuration
            self.logger = logger
            state = Locked(State(endpointIndex: Self.firstEndpoint(among: configuration.endpoints.count)))
            var httpConfiguration = HTTPClient.Configuration(
                timeout: .init(connect: .milliseconds(Self.milliseconds(configuration.requestTimeout))))
            if let files = configuration.tls {
                httpConfiguration.tlsConfiguration = try Self.tlsConfiguration(files)
            }
            http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: httpConfiguration)
        }

        /// The TLS configuration of `files`, each loaded now: a file that is missing, not PEM, or a
        /// client certificate that expired is an error at once, naming the file.
        private static func tlsConfiguration(_ files: EtcdConfiguration.TLSFiles) throws(EtcdError) -> TLSConfiguration
        {
            var tls = TLSConfiguration.makeClientConfiguration()
            func load<Value>(_ what: String, _ path: String, _ body: () throws -> Value) throws(EtcdError) -> Value {
                do {
                    return try body()
                } catch {
                    throw EtcdError(
                        operation: "load TLS files", message: "cannot load the \(what) \(path): \(error)",
                        hint:
                            "check --etcd-cacert, --etcd-cert and --etcd-key (or their variables and credentials): PEM files this user may read"
                    )
                }
            }
            if let authority = files.certificateAuthority {
                let certificates = try load("CA bundle", authority) { try NIOSSLCertificate.fromPEMFile(authority) }
                guard !certificates.isEmpty else {
                    throw EtcdError(
                        operation: "load TLS files", message: "the CA bundle \(authority) holds no certificate",
                        hint: "name the PEM file of the CA that signed the members' certificates (--etcd-cacert)")
                }
                tls.trustRoots = .certificates(certificates)
            }
            if let path = files.certificate {
                let chain = try load("client certificate", path) { try NIOSSLCertificate.fromPEMFile(path) }
                if let leaf = chain.first {
                    let expiry = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
                    guard expiry > Date() else {
                        throw EtcdError(
                            operation: "load TLS files",
                            message: "the client certificate \(path) expired on \(expiry.formatted(.iso8601))",
                            hint: "renew it (openssl x509 -in \(path) -noout -dates shows its dates)")
                    }
                }
                tls.certificateChain = chain.map { .certificate($0) }
            }
            if let path = files.privateKey {
                tls.privateKey = .privateKey(
                    try load("client key", path) { try NIOSSLPrivateKey(file: path, format: .pem) })
            }
            return tls
        }

        /// Closes every connection. Call it once, when done.
        package func shutdown() async {
            try? await http.shutdown()
        }

        /// A client dropped without ``shutdown()`` (a caller that threw before it got there): its
        /// HTTP client is shut down in the background, where it keeps itself alive until done, so
        /// that its connections are closed and a debug build does not trap in its `deinit`. After
        /// ``shutdown()``, this only gets an "already shut down" error, and ignores it.
        deinit {
            http.shutdown { _ in }
        }

        /// The endpoint calls go to now.
        package var currentEndpoint: String {
            let index = state.withLock { $0.endpointIndex }
            return configuration.endpoints[index % max(configuration.endpoints.count, 1)]
        }

        /// Moves on to the endpoint after `failed`, unless another call already did.
        /// The index of the endpoint a host starts with: one that `identity` (its
        /// `/etc/machine-id`, else its host name) picks by hash, the same at every start of that
        /// host. With every host's endpoints listed in one order, as a fleet's unit lists them,
        /// the hosts' watches spread over the members instead of all landing on the first (measured
        /// with 500 watchers: the first member took 501 watches and 80–85% of etcd's CPU).
        package static func firstEndpoint(among count: Int, identity: String = hostIdentity) -> Int {
            guard count > 1 else { return 0 }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for byte in identity.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return Int(hash % UInt64(count))
        }

        /// What tells this host from the others: `/etc/machine-id`, else the host name.
        package static var hostIdentity: String {
            let machineID = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            return machineID.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        }

        package func rotate(after failed: String) {
            state.withLock { state in
                let count = configuration.endpoints.count
                guard count > 1, configuration.endpoints[state.endpointIndex % count] == failed else { return }
                state.endpointIndex = (state.endpointIndex + 1) % count
            }
        }

        // MARK: - Key-value calls

        /// Every key under `prefix` and the revision they were read at: one consistent set (tests
        /// and tools; a fleet reads its documents only, with ``readFleet()``).
        package func range(prefix: String) async throws(EtcdError) -> (keyValues: [EtcdKeyValue], revision: Int64) {
            let response: RangeResponse = try await call(
                "/v3/kv/range", RangeRequest(key: prefix.base64, range_end: rangeEnd(ofPrefix: prefix)),
                operation: "range \(prefix)")
            return ((response.kvs ?? []).compactMap { $0.decoded() }, response.header?.revisionNumber ?? 0)
        }

        /// The most keys ``commit(puts:deletes:prefix:ifUnchangedSince:expecting:)`` can expect: etcd
        /// refuses a transaction with more than `--max-txn-ops` (128 by default) comparisons; one
        /// covers the drop-in directory, and one the main document when it is not expected.
        package static let maximumExpectedKeys = 127

        /// Writes `puts` and deletes `deletes` in one transaction, only if none of the fleet's
        /// documents under `prefix` changed after `revision`: the main document and every key under
        /// `PREFIX/Environments.plist.d/` were last written at or before it (one comparison each;
        /// a key created after it fails it), and every key of `expecting` still exists, last changed
        /// at the revision given for it (a deleted key fails that comparison: etcd compares a
        /// missing key's revision as 0, so 0 expects a key to be absent). Other keys under the
        /// prefix do not count: they are not the fleet's, and a daemon never reads them.
        ///
        /// - Parameters:
        ///   - revision: `nil` to compare `expecting` only.
        ///   - expecting: Keys that must still be as read, each with its last-change revision (0:
        ///     absent); at most ``maximumExpectedKeys``, the main document included.
        ///   - deletingPrefixes: Prefixes whose every key the transaction deletes too.
        /// - Returns: The revision of the write, or `nil` if a comparison failed (nothing was written).
        /// - Throws: ``EtcdError`` if etcd cannot be reached or refuses the transaction, or if
        ///   `expecting` needs more comparisons than one transaction may hold (nothing is sent).
        package func commit(
            puts: [(key: String, value: Data)], deletes: [String], deletingPrefixes: [String] = [], prefix: String,
            ifUnchangedSince revision: Int64?, expecting: [String: Int64] = [:]
        ) async throws(EtcdError) -> Int64? {
            let mainKey = FleetState.mainKey(prefix: prefix)
            let comparisons = expecting.count + (revision == nil ? 0 : expecting[mainKey] == nil ? 2 : 1)
            guard comparisons <= Self.maximumExpectedKeys + 1 else {
                throw EtcdError(
                    operation: "transaction under \(prefix)",
                    message:
                        "\(expecting.count) documents under the prefix, more than one transaction can check (\(Self.maximumExpectedKeys), below etcd's default --max-txn-ops of 128)",
                    hint: "merge drop-ins until at most \(Self.maximumExpectedKeys) documents remain")
            }
            func compare(_ key: String, rangeEnd: String? = nil, _ result: String, _ modRevision: Int64)
                -> TransactionRequest.Compare
            {
                .init(
                    key: key.base64, range_end: rangeEnd, target: "MOD", result: result,
                    mod_revision: String(modRevision))
            }
            let unchanged = expecting.keys.sorted().map { compare($0, "EQUAL", expecting[$0]!) }
            // Every drop-in key was last changed at or before `revision`; so was the main document
            // (when it is expected, its own comparison says more).
            var layout: [TransactionRequest.Compare] = []
            if let revision {
                layout.append(
                    compare(
                        FleetState.dropInDirectory(prefix: prefix),
                        rangeEnd: rangeEnd(ofPrefix: FleetState.dropInDirectory(prefix: prefix)), "LESS", revision + 1))
                if expecting[mainKey] == nil { layout.append(compare(mainKey, "LESS", revision + 1)) }
            }
            let request = TransactionRequest(
                compare: layout + unchanged,
                success: puts.map {
                    .init(request_put: .init(key: $0.key.base64, value: $0.value.base64EncodedString()))
                }
                    + deletes.map { .init(request_delete_range: .init(key: $0.base64)) }
                    + deletingPrefixes.map {
                        .init(request_delete_range: .init(key: $0.base64, range_end: rangeEnd(ofPrefix: $0)))
                    },
                failure: [])
            let response: TransactionResponse = try await call(
                "/v3/kv/txn", request, operation: "transaction under \(prefix)")
            return response.succeeded == true ? response.header?.revisionNumber ?? 0 : nil
        }

        /// Writes one key (tests and tools; a fleet publishes with ``commit(puts:deletes:prefix:ifUnchangedSince:)``).
        @discardableResult
        package func put(_ key: String, _ value: Data) async throws(EtcdError) -> Int64 {
            struct Put: Encodable {
                var key: String
                var value: String
            }
            let response: RangeResponse = try await call(
                "/v3/kv/put", Put(key: key.base64, value: value.base64EncodedString()), operation: "put \(key)")
            return response.header?.revisionNumber ?? 0
        }

        /// Writes one key attached to `lease` (a host's status key), and returns the revision.
        @discardableResult
        package func put(_ key: String, _ value: Data, lease: Int64) async throws(EtcdError) -> Int64 {
            let response: RangeResponse = try await call(
                "/v3/kv/put", PutRequest(key: key.base64, value: value.base64EncodedString(), lease: String(lease)),
                operation: "put \(key)")
            return response.header?.revisionNumber ?? 0
        }

        /// The keys under `prefix`, at most `limit` of them and `maximumBytes` of answer: a bounded
        /// listing (the hosts' status keys). `more` says whether keys were left out.
        package func range(prefix: String, limit: Int, maximumBytes: Int) async throws(EtcdError) -> (
            keyValues: [EtcdKeyValue], revision: Int64, more: Bool
        ) {
            let response: RangeResponse = try await call(
                "/v3/kv/range",
                RangeRequest(key: prefix.base64, range_end: rangeEnd(ofPrefix: prefix), limit: String(limit)),
                operation: "range \(prefix)", maximumResponseSize: maximumBytes)
            return (
                (response.kvs ?? []).compactMap { $0.decoded() }, response.header?.revisionNumber ?? 0,
                response.more ?? false
            )
        }

        // MARK: - Leases

        /// Grants a lease of `ttl` seconds (`/v3/lease/grant`) and returns its id.
        package func grantLease(ttl: Int) async throws(EtcdError) -> Int64 {
            let operation = "grant a lease of \(ttl) s"
            let response: LeaseGrantResponse = try await call(
                "/v3/lease/grant", LeaseGrantRequest(TTL: String(ttl)), operation: operation)
            guard let id = response.ID.flatMap(Int64.init), id != 0 else {
                throw EtcdError(operation: operation, message: response.error ?? "etcd gave no lease id")
            }
            return id
        }

        /// Renews `lease` once (`/v3/lease/keepalive`, one message): its TTL in seconds now, or 0
        /// when etcd no longer has it (it expired: grant a new one).
        package func keepAlive(lease: Int64) async throws(EtcdError) -> Int {
            let response: LeaseKeepAliveResponse = try await call(
                "/v3/lease/keepalive", LeaseRequest(ID: String(lease)), operation: "renew lease \(lease)")
            if let error = response.error {
                throw EtcdError(
                    operation: "renew lease \(lease)", message: error.message ?? error.error ?? "error",
                    code: error.code)
            }
            return response.result?.TTL.flatMap(Int.init) ?? 0
        }

        /// Revokes `lease`: etcd deletes every key attached to it at once.
        package func revokeLease(_ lease: Int64) async throws(EtcdError) {
            let _: EmptyResponse = try await call(
                "/v3/lease/revoke", LeaseRequest(ID: String(lease)), operation: "revoke lease \(lease)")
        }

        // MARK: - Watching

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
            watch(key: prefix, rangeEnd: rangeEnd(ofPrefix: prefix), from: revision, name: prefix)
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
        /// The stream ends with an error when the endpoint goes away (call ``rotate(after:)`` and
        /// watch again from the last revision applied), or with one whose `responseTooLarge` is
        /// set when one message is larger than the documents may be together (read the fleet whole,
        /// then watch from there); it ends when the task iterating it is cancelled.
        package func watchFleet(from revision: Int64) -> AsyncThrowingStream<WatchUpdate, any Error> {
            let prefix = configuration.prefix
            return watch(
                key: FleetState.mainKey(prefix: prefix),
                rangeEnd: rangeEnd(ofPrefix: FleetState.dropInDirectory(prefix: prefix)), from: revision,
                name: "the fleet's documents under \(prefix)")
        }

        /// The longest watch message kept: what all the documents may hold, in base64, and 1 MiB
        /// for the rest of the message.
        private var maximumWatchMessageSize: Int { (configuration.limits.totalBytes / 3 + 1) * 4 + (1 << 20) }

        /// How often a watch checks whether it is time to ask its member for a sign of life.
        private static let stallCheckInterval: Duration = .milliseconds(250)

        /// A watch of the keys from `key` to `rangeEnd`, on the current endpoint.
        ///
        /// A watch that hears nothing for half of `requestTimeout` asks its member, on a connection
        /// of its own, for the newest revision among those keys (a linearizable read, so a member
        /// cut off from the leader cannot answer it either). The watch fails as the endpoint's
        /// unavailability when the member does not answer within `requestTimeout`, or when it
        /// answered a revision that the watch still has not delivered at the next check: a member
        /// stopped with its connections open (SIGSTOP, a hung disk, a network that drops packets)
        /// is noticed within one and a half `requestTimeout` (7.5 s by default), and the caller
        /// moves to the next endpoint.
        ///
        /// Why not etcd's own progress requests on the watch stream: the JSON gateway of etcd 3.4
        /// holds every answer back while a request body is still open, so a stream that stays
        /// open for them delivers nothing in time; and progress notifications come every 10
        /// minutes unless every member runs with `--experimental-watch-progress-notify-interval`.
        private func watch(key: String, rangeEnd: String, from revision: Int64, name: String)
            -> AsyncThrowingStream<WatchUpdate, any Error>
        {
            let endpoint = currentEndpoint
            let operation = "watch \(name) from revision \(revision)"
            let create = WatchCreateRequest(
                create_request: .init(key: key.base64, range_end: rangeEnd, start_revision: String(revision)))
            let probe = RangeRequest(
                key: key.base64, range_end: rangeEnd, limit: "1", keys_only: true, sort_order: "DESCEND",
                sort_target: "MOD")
            return AsyncThrowingStream { continuation in
                let task = Task {
                    // When the stream last brought a byte, and the newest revision it delivered.
                    let heard = Locked(ContinuousClock.now)
                    let delivered = Locked(revision - 1)
                    do {
                        let token = try await self.token(for: endpoint)
                        let request = try self.makeRequest(
                            endpoint, "/v3/watch", create, token: token, operation: operation)
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask {
                                try await self.receive(
                                    request, from: endpoint, operation: operation, heard: heard, delivered: delivered,
                                    into: continuation)
                            }
                            group.addTask {
                                try await self.checkForStalls(
                                    probe, on: endpoint, watching: operation, heard: heard, delivered: delivered)
                            }
                            // The first to end (the stream, with an error; the check, with a stall)
                            // ends the other.
                            try await group.next()
                            group.cancelAll()
                        }
                        continuation.finish()
                    } catch {
                        self.forgetToken(of: endpoint, ifRejectedBy: error)
                        continuation.finish(throwing: error)
                    }
                }
                continuation.onTermination = { _ in task.cancel() }
            }
        }

        /// Runs beside a watch on `endpoint` until it throws: every ``stallCheckInterval``, once the
        /// stream has been silent for half of `requestTimeout`, asks the member for the newest
        /// revision of the watched keys; a revision it had at the last question that the watch has
        /// still not delivered is a stall.
        ///
        /// - Parameters:
        ///   - heard: When the stream last brought a byte.
        ///   - delivered: The newest revision the stream delivered.
        private func checkForStalls(
            _ probe: RangeRequest, on endpoint: String, watching operation: String,
            heard: Locked<ContinuousClock.Instant>, delivered: Locked<Int64>
        ) async throws {
            let stallTimeout = configuration.requestTimeout
            var asked = ContinuousClock.now
            var behind: Int64?
            while true {
                try await Task.sleep(for: Self.stallCheckInterval)
                let now = ContinuousClock.now
                guard now - heard.withLock({ $0 }) >= stallTimeout / 2, now - asked >= stallTimeout / 2 else {
                    continue
                }
                asked = now
                let newest = try await newestRevision(
                    probe, on: endpoint, watching: operation, silence: now - heard.withLock { $0 })
                let reached = delivered.withLock { $0 }
                if let behind, behind > reached {
                    throw Self.stalled(
                        operation, on: endpoint,
                        "the member has had revision \(behind) of the watched keys for \(Self.seconds(stallTimeout / 2)), and the watch has delivered up to \(reached) only: it is stalled"
                    )
                }
                behind = newest > reached ? newest : nil
            }
        }

        /// A token etcd no longer knows (the cluster restarted, or the token expired, and etcd
        /// cancelled the watch for it): the next watch on this endpoint authenticates again rather
        /// than present the same token, and fail, forever.
        private func forgetToken(of endpoint: String, ifRejectedBy error: any Error) {
            guard let failure = error as? EtcdError, failure.isAuthenticationFailure, configuration.userName != nil
            else { return }
            state.withLock { _ = $0.tokens.removeValue(forKey: endpoint) }
        }

        /// The newest revision among the keys `probe` covers, asked of `endpoint` alone; an error
        /// marked as the endpoint's unavailability when it does not answer within the request timeout.
        private func newestRevision(
            _ probe: RangeRequest, on endpoint: String, watching operation: String, silence: Duration
        )
            async throws(EtcdError) -> Int64
        {
            do {
                let response: RangeResponse = try await callOnce(
                    endpoint, "/v3/kv/range", probe, operation: "ask \(endpoint) for a sign of life",
                    maximumResponseSize: FleetLimits.listedBytes, reauthenticate: true)
                return (response.kvs ?? []).compactMap { $0.decoded()?.modRevision }.max() ?? 0
            } catch {
                throw Self.stalled(
                    operation, on: endpoint,
                    "nothing on the watch for \(Self.seconds(silence)), and the member does not answer either (\(error.message)): it is stalled or cut off"
                )
            }
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

        /// `2.3 s`.
        private static func seconds(_ duration: Duration) -> String {
            String(format: "%.1f s", Double(milliseconds(duration)) / 1000)
        }

        /// Sends `request` to `endpoint` and yields what its answer says, noting in `heard` when
        /// each byte arrives and in `delivered` the newest revision yielded; ends with an error.
        private func receive(
            _ request: HTTPClientRequest, from endpoint: String, operation: String,
            heard: Locked<ContinuousClock.Instant>,
            delivered: Locked<Int64>, into continuation: AsyncThrowingStream<WatchUpdate, any Error>.Continuation
        ) async throws {
            let maximumMessageSize = maximumWatchMessageSize
            let response: HTTPClientResponse
            do {
                response = try await http.execute(request, deadline: .distantFuture, logger: logger)
            } catch {
                throw EtcdError(operation: operation, endpoint: endpoint, message: "\(error)")
            }
            heard.withLock { $0 = .now }
            guard response.status == .ok else {
                let bytes = try await response.body.collect(upTo: Self.maximumResponseSize)
                throw Self.error(from: Data(bytes.readableBytesView), status: response.status, operation, endpoint)
            }
            // Lines are looked for in the bytes that arrive only, so a long message costs time in
            // proportion to its length.
            var pending: [UInt8] = []
            var searched = 0
            for try await chunk in response.body {
                heard.withLock { $0 = .now }
                pending.append(contentsOf: chunk.readableBytesView)
                var lineStart = 0
                while let newline = pending[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                    if let update = try Self.update(fromLine: Data(pending[lineStart..<newline]), operation, endpoint) {
                        if case .changes(let revision, _) = update { delivered.withLock { $0 = max($0, revision) } }
                        continuation.yield(update)
                    }
                    lineStart = newline + 1
                    searched = lineStart
                }
                if lineStart > 0 {
                    pending.removeFirst(lineStart)
                }
                searched = pending.count
                if pending.count > maximumMessageSize {
                    var error = EtcdError(
                        operation: operation, endpoint: endpoint,
                        message:
                            "a watch message is larger than \(FleetLimits.describe(bytes: maximumMessageSize)) (the fleet's documents may hold \(FleetLimits.describe(bytes: configuration.limits.totalBytes)) together, \(FleetLimits.totalBytesVariable))"
                    )
                    error.responseTooLarge = true
                    throw error
                }
            }
            if let update = try Self.update(fromLine: Data(pending), operation, endpoint) {
                continuation.yield(update)
            }
            throw EtcdError(operation: operation, endpoint: endpoint, message: "the watch stream ended")
        }

        private static func update(fromLine line: Data, _ operation: String, _ endpoint: String) throws(EtcdError)
            -> WatchUpdate?
        {
            guard line.contains(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") }) else { return nil }
            let message: WatchMessage
            do {
                message = try JSONDecoder().decode(WatchMessage.self, from: line)
            } catch {
                throw EtcdError(operation: operation, endpoint: endpoint, message: "unreadable watch message: \(error)")
            }
            if let error = message.error {
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: error.message ?? error.error ?? "error",
                    code: error.code)
            }
            guard let result = message.result else { return nil }
            let revision = result.header?.revisionNumber ?? 0
            if let compacted = result.compact_revision.flatMap(Int64.init), compacted > 0 {
                return .compacted(revision: compacted)
            }
            if result.canceled == true {
                throw EtcdError(
                    operation: operation, endpoint: endpoint,
                    message: "etcd cancelled the watch: \(result.cancel_reason ?? "no reason given")")
            }
            if result.created == true { return .created(revision: revision) }
            let changes = (result.events ?? []).compactMap { event -> EtcdChange? in
                guard let kv = event.kv?.decoded() else { return nil }
                return EtcdChange(
                    key: kv.key, value: event.type == "DELETE" ? nil : kv.value, modRevision: kv.modRevision)
            }
            guard !changes.isEmpty else { return nil }
            return .changes(revision: changes.map(\.modRevision).max() ?? revision, changes)
        }

        // MARK: - Requests

        /// Sends one unary call, moving on to the next endpoint when the current one cannot answer.
        ///
        /// An answer larger than `maximumResponseSize` bytes is an error whose `responseTooLarge` is
        /// set: the endpoint answered, so no other is tried.
        func call<Body: Encodable, Response: Decodable>(
            _ path: String, _ body: Body, operation: String, maximumResponseSize: Int = EtcdClient.maximumResponseSize
        ) async throws(EtcdError) -> Response {
            var failures: [String] = []
            var hints: [String] = []
            for _ in 0..<max(configuration.endpoints.count, 1) {
                let endpoint = currentEndpoint
                do {
                    return try await callOnce(
                        endpoint, path, body, operation: operation, maximumResponseSize: maximumResponseSize,
                        reauthenticate: true)
                } catch  where error.endpointUnavailable {
                    failures.append("\(endpoint): \(error.message)")
                    if let hint = error.hint, !hints.contains(hint) { hints.append(hint) }
                    rotate(after: endpoint)
                }
            }
            hints.append(
                "check the members with `etcdctl --endpoints \(configuration.endpoints.joined(separator: ",")) endpoint health`"
            )
            throw EtcdError(
                operation: operation, message: "no endpoint answered (\(failures.joined(separator: "; ")))",
                hint: hints.joined(separator: "; "))
        }

        private func callOnce<Body: Encodable, Response: Decodable>(
            _ endpoint: String, _ path: String, _ body: Body, operation: String, maximumResponseSize: Int,
            reauthenticate: Bool
        ) async throws(EtcdError) -> Response {
            let token = try await token(for: endpoint)
            let (status, data) = try await send(
                endpoint, path, body, token: token, operation: operation, maximumResponseSize: maximumResponseSize)
            guard status == .ok else {
                let error = Self.error(from: data, status: status, operation, endpoint)
                if reauthenticate, error.isAuthenticationFailure, configuration.userName != nil {
                    state.withLock { _ = $0.tokens.removeValue(forKey: endpoint) }
                    return try await callOnce(
                        endpoint, path, body, operation: operation, maximumResponseSize: maximumResponseSize,
                        reauthenticate: false)
                }
                throw error
            }
            return try Self.decode(data, operation, endpoint)
        }

        /// The authentication token for `endpoint`, asked for once; `nil` without a user.
        private func token(for endpoint: String) async throws(EtcdError) -> String? {
            guard let name = configuration.userName else { return nil }
            if let token = state.withLock({ $0.tokens[endpoint] }) { return token }
            let operation = "authenticate as \(name)"
            let (status, data) = try await send(
                endpoint, "/v3/auth/authenticate",
                AuthenticateRequest(name: name, password: configuration.password ?? ""),
                token: nil, operation: operation)
            guard status == .ok else { throw Self.error(from: data, status: status, operation, endpoint) }
            let response: AuthenticateResponse = try Self.decode(data, operation, endpoint)
            guard let token = response.token, !token.isEmpty else {
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: "etcd gave no token",
                    hint: "check that authentication is enabled (`etcdctl auth status`)")
            }
            state.withLock { $0.tokens[endpoint] = token }
            return token
        }

        /// POSTs `body` as JSON to `path` on `endpoint` and returns the status and the body.
        private func send<Body: Encodable>(
            _ endpoint: String, _ path: String, _ body: Body, token: String?, operation: String,
            maximumResponseSize: Int = EtcdClient.maximumResponseSize
        ) async throws(EtcdError) -> (HTTPResponseStatus, Data) {
            let request = try makeRequest(endpoint, path, body, token: token, operation: operation)
            do {
                let response = try await http.execute(
                    request, timeout: .milliseconds(Self.milliseconds(configuration.requestTimeout)), logger: logger)
                return (
                    response.status,
                    Data((try await response.body.collect(upTo: maximumResponseSize)).readableBytesView)
                )
            } catch is NIOTooManyBytesError {
                var error = EtcdError(
                    operation: operation, endpoint: endpoint,
                    message: "the answer is larger than \(FleetLimits.describe(bytes: maximumResponseSize))")
                error.responseTooLarge = true
                throw error
            } catch {
                var failure = EtcdError(operation: operation, endpoint: endpoint, message: "\(error)")
                if let (message, hint) = Self.explainTLSFailure(
                    error, endpoint: endpoint, presentsCertificate: configuration.tls?.certificate != nil)
                {
                    failure.message = message
                    failure.hint = hint
                }
                throw failure.unavailable()
            }
        }

        /// What a TLS failure means, in words, and what to check; `nil` for another error.
        static func explainTLSFailure(_ error: any Error, endpoint: String, presentsCertificate: Bool)
            -> (message: String, hint: String)?
        {
            let text = "\(error)"
            let authority = "the CA bundle (--etcd-cacert)"
            let host = URL(string: endpoint).map { "\($0.host ?? "HOST"):\($0.port ?? 2379)" } ?? "HOST:PORT"
            let check =
                "openssl s_client -connect \(host) -CAfile CA.pem shows the member's certificate and why it fails"
            if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
                return (
                    "TLS: the member's certificate does not name the host of \(endpoint) (\(text))",
                    "use the name the certificate lists in its subjectAltName, or reissue it with this one; \(check)"
                )
            }
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                return (
                    "TLS: the member's certificate cannot be verified with \(authority): signed by another CA, expired or not yet valid (\(text))",
                    check
                )
            }
            if text.contains("ALERT_BAD_CERTIFICATE") || text.contains("ALERT_UNKNOWN_CA")
                || text.contains("ALERT_CERTIFICATE_REQUIRED") || text.contains("ALERT_CERTIFICATE_EXPIRED")
            {
                return (
                    "TLS: the member refused this client's certificate (\(text))",
                    "etcd's --client-cert-auth wants a client certificate (--etcd-cert, --etcd-key) signed by its --trusted-ca-file"
                )
            }
            if endpoint.hasPrefix("https://"), !presentsCertificate, text.contains("remoteConnectionClosed") {
                // TLS 1.3: the member checks the client's certificate after the handshake, and closes.
                return (
                    "the member closed the connection: it may require a client certificate, and none was given (\(text))",
                    "etcd's --client-cert-auth wants a client certificate (--etcd-cert, --etcd-key) signed by its --trusted-ca-file"
                )
            }
            if text.contains("WRONG_VERSION_NUMBER") {
                return (
                    "TLS: \(endpoint) does not speak TLS (\(text))", "use its http:// URL, or enable TLS on the member"
                )
            }
            return nil
        }

        /// A POST of `body` as JSON to `path` on `endpoint`, with `token` if any.
        private func makeRequest<Body: Encodable>(
            _ endpoint: String, _ path: String, _ body: Body, token: String?, operation: String
        ) throws(EtcdError) -> HTTPClientRequest {
            let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
            var request = HTTPClientRequest(url: base + path)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            if let token { request.headers.add(name: "Authorization", value: token) }
            do {
                request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
            } catch {
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: "cannot encode the request: \(error)")
            }
            return request
        }

        private static func decode<Response: Decodable>(_ data: Data, _ operation: String, _ endpoint: String)
            throws(EtcdError) -> Response
        {
            do {
                return try JSONDecoder().decode(Response.self, from: data)
            } catch {
                throw EtcdError(operation: operation, endpoint: endpoint, message: "unreadable answer: \(error)")
            }
        }

        private static func error(from data: Data, status: HTTPResponseStatus, _ operation: String, _ endpoint: String)
            -> EtcdError
        {
            let decoded = try? JSONDecoder().decode(GatewayError.self, from: data)
            // Not JSON (the gateway's own refusals are text): the start of the text, on one line.
            let text = String(decoding: data.prefix(300), as: UTF8.self).split(whereSeparator: \.isNewline)
                .joined(separator: " ").trimmingCharacters(in: .whitespaces)
            let message =
                decoded?.message ?? decoded?.error
                ?? (text.isEmpty ? "HTTP \(status.code)" : "HTTP \(status.code): \(text)")
            var error = EtcdError(operation: operation, endpoint: endpoint, message: message, code: decoded?.code)
            // Unavailable (no leader, stopping) or a gateway error: another member may answer.
            if status.code >= 500 || decoded?.code == 14 { error = error.unavailable() }
            if error.isAuthenticationFailure || decoded?.code == 7 {
                error.hint = "check the etcd-user and etcd-password credentials and the user's role on the prefix"
            }
            if message.contains("CommonName of client sending a request against gateway") {
                error.hint =
                    "with authentication on, etcd 3.4's JSON gateway refuses a client certificate that has a CommonName "
                    + "(etcd would take it for the user): issue the client certificate without a CommonName "
                    + "(a subject of O= only, with its subjectAltName)"
            }
            return error
        }

        private static func milliseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
    }

    extension EtcdError {
        /// Marks the error as the endpoint's unavailability, after which another endpoint is tried.
        fileprivate func unavailable() -> EtcdError {
            var copy = self
            copy.endpointUnavailable = true
            return copy
        }
    }
#endif
