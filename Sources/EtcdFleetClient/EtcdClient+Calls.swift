#if Fleet
    import GRPCCore

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// Unary calls: the endpoint that answers, the user's token, the deadline, and etcd's errors
    /// in words.
    extension EtcdClient {
        /// Sends one call, moving on to the next endpoint when the current one cannot answer.
        ///
        /// An answer larger than `maximumResponseSize` bytes is an error whose `responseTooLarge` is
        /// set: the endpoint answered, so no other is tried.
        func call<Response: Sendable>(
            _ operation: String, maximumResponseSize: Int = EtcdClient.maximumResponseSize,
            _ body: @Sendable (EtcdConnection, Metadata, CallOptions) async throws -> Response
        ) async throws(EtcdError) -> Response {
            var failures: [String] = []
            var hints: [String] = []
            for _ in 0..<max(configuration.endpoints.count, 1) {
                let endpoint = currentEndpoint
                do {
                    return try await callOnce(
                        endpoint, operation, maximumResponseSize: maximumResponseSize, reauthenticate: true, body)
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

        /// Sends one call to `endpoint` alone, authenticating again once if etcd no longer knows
        /// the token.
        func callOnce<Response: Sendable>(
            _ endpoint: String, _ operation: String, maximumResponseSize: Int = EtcdClient.maximumResponseSize,
            reauthenticate: Bool = true,
            _ body: @Sendable (EtcdConnection, Metadata, CallOptions) async throws -> Response
        ) async throws(EtcdError) -> Response {
            let connection = try connection(to: endpoint, operation: operation)
            let token = try await token(for: endpoint, on: connection)
            do {
                return try await body(
                    connection, Self.metadata(token), callOptions(maximumResponseSize: maximumResponseSize))
            } catch {
                let failure = self.failure(error, operation, endpoint, maximumResponseSize: maximumResponseSize)
                if reauthenticate, failure.isAuthenticationFailure, configuration.userName != nil {
                    cache(token: nil, for: endpoint)
                    return try await callOnce(
                        endpoint, operation, maximumResponseSize: maximumResponseSize, reauthenticate: false, body)
                }
                throw failure
            }
        }

        /// The authentication token for `endpoint`, asked for once; `nil` without a user.
        func token(for endpoint: String, on connection: EtcdConnection) async throws(EtcdError) -> String? {
            guard let name = configuration.userName else { return nil }
            if let token = cachedToken(for: endpoint) { return token }
            let operation = "authenticate as \(name)"
            var request = Etcdserverpb_AuthenticateRequest()
            request.name = name
            request.password = configuration.password ?? ""
            let response: Etcdserverpb_AuthenticateResponse
            do {
                response = try await connection.auth.authenticate(request, options: callOptions())
            } catch {
                throw failure(error, operation, endpoint)
            }
            guard !response.token.isEmpty else {
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: "etcd gave no token",
                    hint: "check that authentication is enabled (`etcdctl auth status`)")
            }
            cache(token: response.token, for: endpoint)
            return response.token
        }

        /// The metadata that carries `token` (etcd reads it as `token`).
        static func metadata(_ token: String?) -> Metadata {
            var metadata = Metadata()
            if let token { metadata.addString(token, forKey: "token") }
            return metadata
        }

        /// A call's options: the request timeout (`nil` for a watch, which lasts), the largest
        /// answer read, and no waiting for a member that cannot be reached.
        func callOptions(maximumResponseSize: Int = EtcdClient.maximumResponseSize, timeout: Bool = true)
            -> CallOptions
        {
            var options = CallOptions.defaults
            options.timeout = timeout ? configuration.requestTimeout : nil
            options.maxResponseMessageBytes = maximumResponseSize
            options.waitForReady = false
            return options
        }

        /// `error`, thrown by a call of `operation` to `endpoint`, as an ``EtcdError``: etcd's
        /// message and code, whether another endpoint may answer, and what to do.
        func failure(_ error: any Error, _ operation: String, _ endpoint: String, maximumResponseSize: Int = 0)
            -> EtcdError
        {
            if let failure = error as? EtcdError { return failure }
            guard let rpc = error as? RPCError else {
                return EtcdError(operation: operation, endpoint: endpoint, message: "\(error)").unavailable()
            }
            var failure = EtcdError(
                operation: operation, endpoint: endpoint, message: rpc.message, code: rpc.code.rawValue)
            switch rpc.code {
            case .resourceExhausted where rpc.message.contains("maximum payload size"):
                failure.message = "the answer is larger than \(FleetLimits.describe(bytes: maximumResponseSize))"
                failure.responseTooLarge = true
            case .deadlineExceeded:
                failure.message = "no answer within \(Self.seconds(configuration.requestTimeout)) (\(rpc.message))"
                failure = failure.unavailable()
            case .unavailable, .unknown, .internalError:
                // Unreachable, no leader, stopping, or the connection failed: another may answer.
                let text = Self.describe(rpc)
                failure.message = text
                if let (message, hint) = Self.explainTLSFailure(
                    text, endpoint: endpoint, presentsCertificate: configuration.tls?.certificate != nil)
                {
                    failure.message = message
                    failure.hint = hint
                }
                failure = failure.unavailable()
            case .permissionDenied, .unauthenticated:
                failure.hint = "check the etcd-user and etcd-password credentials and the user's role on the prefix"
            case .invalidArgument where rpc.message.contains("authentication failed"):
                failure.hint = "check the etcd-user and etcd-password credentials (etcdctl user get NAME)"
            default:
                break
            }
            return failure
        }

        /// An RPC error with the chain of its causes, on one line.
        static func describe(_ error: RPCError) -> String {
            var text = error.message
            var cause = error.cause
            var depth = 0
            while let next = cause, depth < 4 {
                if let rpc = next as? RPCError {
                    text += ": \(rpc.message)"
                    cause = rpc.cause
                } else {
                    text += ": \(String(reflecting: next))"
                    cause = nil
                }
                depth += 1
            }
            return text.split(whereSeparator: \.isNewline).joined(separator: " ")
        }

        /// `2.3 s`.
        static func seconds(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            return FleetNumbers.oneDecimal(Double(seconds) + Double(attoseconds) / 1e18) + " s"
        }
    }

    extension EtcdError {
        /// Marks the error as the endpoint's unavailability, after which another endpoint is tried.
        func unavailable() -> EtcdError {
            var copy = self
            copy.endpointUnavailable = true
            return copy
        }
    }
#endif
