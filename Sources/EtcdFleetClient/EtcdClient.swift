import AsyncHTTPClient
import Environments
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// A client for etcd's v3 JSON gateway (`/v3/kv/range`, `/v3/watch`, `/v3/kv/txn`), over
/// AsyncHTTPClient.
///
/// It talks to one endpoint at a time. When that member cannot be reached (refused, reset,
/// timed out, or "no leader"), the next endpoint takes over for this call and every later one;
/// a watch that ends that way is resumed by its caller from the last revision it applied.
/// With a user configured, it authenticates once per endpoint and again when etcd says the
/// token expired.
package final class EtcdClient: Sendable {
    /// How to reach etcd.
    package let configuration: EtcdConfiguration
    private let http: HTTPClient
    private let logger: Logger

    private struct State {
        var endpointIndex = 0
        var tokens: [String: String] = [:]
    }
    private let state = Locked(State())

    /// The largest response read into memory (range and transaction answers): far above any
    /// configuration, and a bound on what a misbehaving endpoint can make the daemon hold.
    static let maximumResponseSize = 64 << 20
    /// The longest line of a watch stream kept while waiting for its end.
    static let maximumWatchMessageSize = 64 << 20

    /// A client for `configuration`; nothing is sent until the first call.
    ///
    /// - Throws: ``EtcdError`` if a TLS file cannot be loaded.
    package init(configuration: EtcdConfiguration, logger: Logger = Logger(label: "EnvironmentsEtcd")) throws(EtcdError)
    {
        self.configuration = configuration
        self.logger = logger
        var httpConfiguration = HTTPClient.Configuration(
            timeout: .init(connect: .milliseconds(Self.milliseconds(configuration.requestTimeout))))
        if let files = configuration.tls {
            httpConfiguration.tlsConfiguration = try Self.tlsConfiguration(files)
        }
        http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: httpConfiguration)
    }

    /// The TLS configuration of `files`, each loaded now: a file that is missing, not PEM, or a
    /// client certificate that expired is an error at once, naming the file.
    private static func tlsConfiguration(_ files: EtcdConfiguration.TLSFiles) throws(EtcdError) -> TLSConfiguration {
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

    /// The endpoint calls go to now.
    package var currentEndpoint: String {
        let index = state.withLock { $0.endpointIndex }
        return configuration.endpoints[index % max(configuration.endpoints.count, 1)]
    }

    /// Moves on to the endpoint after `failed`, unless another call already did.
    package func rotate(after failed: String) {
        state.withLock { state in
            let count = configuration.endpoints.count
            guard count > 1, configuration.endpoints[state.endpointIndex % count] == failed else { return }
            state.endpointIndex = (state.endpointIndex + 1) % count
        }
    }

    // MARK: - Key-value calls

    /// Every key under `prefix` and the revision they were read at: one consistent set.
    package func range(prefix: String) async throws(EtcdError) -> (keyValues: [EtcdKeyValue], revision: Int64) {
        let response: RangeResponse = try await call(
            "/v3/kv/range", RangeRequest(key: prefix.base64, range_end: rangeEnd(ofPrefix: prefix)),
            operation: "range \(prefix)")
        return ((response.kvs ?? []).compactMap { $0.decoded() }, response.header?.revisionNumber ?? 0)
    }

    /// The most keys ``commit(puts:deletes:prefix:ifUnchangedSince:expecting:)`` can expect: etcd
    /// refuses a transaction with more than `--max-txn-ops` (128 by default) comparisons, and one
    /// of them covers the whole prefix.
    package static let maximumExpectedKeys = 127

    /// Writes `puts` and deletes `deletes` in one transaction, only if nothing under `prefix`
    /// changed after `revision`: no key was written or created after it (one comparison over the
    /// range), and every key of `expecting` still exists, last changed at the revision given
    /// for it (a deleted key fails that comparison: etcd compares a missing key's revision as 0).
    ///
    /// - Parameter expecting: The keys read at `revision` that must still be there, each with
    ///   its last-change revision; at most ``maximumExpectedKeys``.
    /// - Returns: The revision of the write, or `nil` if something under `prefix` changed after
    ///   `revision` (nothing was written).
    /// - Throws: ``EtcdError`` if etcd cannot be reached or refuses the transaction, or if
    ///   `expecting` has more than ``maximumExpectedKeys`` keys (nothing is sent).
    package func commit(
        puts: [(key: String, value: Data)], deletes: [String], prefix: String, ifUnchangedSince revision: Int64,
        expecting: [String: Int64] = [:]
    ) async throws(EtcdError) -> Int64? {
        guard expecting.count <= Self.maximumExpectedKeys else {
            throw EtcdError(
                operation: "transaction under \(prefix)",
                message:
                    "\(expecting.count) documents under the prefix, more than one transaction can check (\(Self.maximumExpectedKeys), below etcd's default --max-txn-ops of 128)",
                hint: "merge drop-ins until at most \(Self.maximumExpectedKeys) documents remain")
        }
        let unchanged = expecting.keys.sorted().map { key in
            TransactionRequest.Compare(
                key: key.base64, range_end: nil, target: "MOD", result: "EQUAL",
                mod_revision: String(expecting[key]!))
        }
        let request = TransactionRequest(
            compare: [
                // Every key in the range was last changed at or before `revision`.
                .init(
                    key: prefix.base64, range_end: rangeEnd(ofPrefix: prefix), target: "MOD", result: "LESS",
                    mod_revision: String(revision + 1))
            ] + unchanged,
            success: puts.map { .init(request_put: .init(key: $0.key.base64, value: $0.value.base64EncodedString())) }
                + deletes.map { .init(request_delete_range: .init(key: $0.base64)) },
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

    /// Watches every key under `prefix` from `revision` on, on the current endpoint.
    ///
    /// The stream ends with an error when the endpoint goes away (call ``rotate(after:)`` and
    /// watch again from the last revision applied), and ends when the task iterating it is
    /// cancelled.
    package func watch(prefix: String, from revision: Int64) -> AsyncThrowingStream<WatchUpdate, any Error> {
        let endpoint = currentEndpoint
        let operation = "watch \(prefix) from revision \(revision)"
        let body = WatchCreateRequest(
            create_request: .init(
                key: prefix.base64, range_end: rangeEnd(ofPrefix: prefix), start_revision: String(revision)))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let token = try await self.token(for: endpoint)
                    let request = try self.makeRequest(endpoint, "/v3/watch", body, token: token, operation: operation)
                    let response: HTTPClientResponse
                    do {
                        response = try await self.http.execute(request, deadline: .distantFuture, logger: self.logger)
                    } catch {
                        throw EtcdError(operation: operation, endpoint: endpoint, message: "\(error)")
                    }
                    guard response.status == .ok else {
                        let bytes = try await response.body.collect(upTo: Self.maximumResponseSize)
                        throw Self.error(
                            from: Data(bytes.readableBytesView), status: response.status, operation, endpoint)
                    }
                    var pending = Data()
                    for try await chunk in response.body {
                        pending.append(contentsOf: chunk.readableBytesView)
                        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                            let line = pending[pending.startIndex..<newline]
                            pending = Data(pending[pending.index(after: newline)...])
                            if let update = try Self.update(fromLine: Data(line), operation, endpoint) {
                                continuation.yield(update)
                            }
                        }
                        if pending.count > Self.maximumWatchMessageSize {
                            throw EtcdError(
                                operation: operation, endpoint: endpoint,
                                message: "a watch message is larger than \(Self.maximumWatchMessageSize >> 20) MiB")
                        }
                    }
                    if let update = try Self.update(fromLine: pending, operation, endpoint) {
                        continuation.yield(update)
                    }
                    throw EtcdError(operation: operation, endpoint: endpoint, message: "the watch stream ended")
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
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
            return EtcdChange(key: kv.key, value: event.type == "DELETE" ? nil : kv.value, modRevision: kv.modRevision)
        }
        guard !changes.isEmpty else { return nil }
        return .changes(revision: changes.map(\.modRevision).max() ?? revision, changes)
    }

    // MARK: - Requests

    /// Sends one unary call, moving on to the next endpoint when the current one cannot answer.
    private func call<Body: Encodable, Response: Decodable>(
        _ path: String, _ body: Body, operation: String
    ) async throws(EtcdError) -> Response {
        var failures: [String] = []
        var hints: [String] = []
        for _ in 0..<max(configuration.endpoints.count, 1) {
            let endpoint = currentEndpoint
            do {
                return try await callOnce(endpoint, path, body, operation: operation, reauthenticate: true)
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
        _ endpoint: String, _ path: String, _ body: Body, operation: String, reauthenticate: Bool
    ) async throws(EtcdError) -> Response {
        let token = try await token(for: endpoint)
        let (status, data) = try await send(endpoint, path, body, token: token, operation: operation)
        guard status == .ok else {
            let error = Self.error(from: data, status: status, operation, endpoint)
            if reauthenticate, error.isAuthenticationFailure, configuration.userName != nil {
                state.withLock { _ = $0.tokens.removeValue(forKey: endpoint) }
                return try await callOnce(endpoint, path, body, operation: operation, reauthenticate: false)
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
            endpoint, "/v3/auth/authenticate", AuthenticateRequest(name: name, password: configuration.password ?? ""),
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
        _ endpoint: String, _ path: String, _ body: Body, token: String?, operation: String
    ) async throws(EtcdError) -> (HTTPResponseStatus, Data) {
        let request = try makeRequest(endpoint, path, body, token: token, operation: operation)
        do {
            let response = try await http.execute(
                request, timeout: .milliseconds(Self.milliseconds(configuration.requestTimeout)), logger: logger)
            return (
                response.status,
                Data((try await response.body.collect(upTo: Self.maximumResponseSize)).readableBytesView)
            )
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
        let check = "openssl s_client -connect \(host) -CAfile CA.pem shows the member's certificate and why it fails"
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
            return ("TLS: \(endpoint) does not speak TLS (\(text))", "use its http:// URL, or enable TLS on the member")
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
            throw EtcdError(operation: operation, endpoint: endpoint, message: "cannot encode the request: \(error)")
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
