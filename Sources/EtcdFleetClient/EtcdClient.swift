#if Fleet
    import Environments
    import GRPCCore
    import GRPCNIOTransportHTTP2Posix
    import Locking
    package import Logging

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// A client for etcd's v3 gRPC API (KV, Watch, Lease, Auth, Maintenance), over grpc-swift 2
    /// and HTTP/2 (with TLS from swift-nio-ssl).
    ///
    /// It talks to one endpoint at a time, starting with the one this host's machine id picks
    /// (``firstEndpoint(among:identity:)``), so that a fleet's hosts spread over the members rather
    /// than all watching the first. When that member cannot be reached (refused, reset,
    /// timed out, or "no leader"), the next endpoint takes over for this call and every later one;
    /// a watch that ends that way, or whose member stalls, is resumed by its caller from the last
    /// revision it applied. Every request has a deadline (`requestTimeout`). Each endpoint has one
    /// HTTP/2 connection, opened at its first call, that every call and watch on it shares.
    /// With a user configured, it authenticates once per endpoint and again when etcd says the
    /// token expired.
    package final class EtcdClient: Sendable {
        /// How to reach etcd.
        package let configuration: EtcdConfiguration
        let logger: Logger
        /// The TLS settings every connection uses, loaded once; `nil` for plain HTTP/2.
        private let tls: HTTP2ClientTransport.Posix.TransportSecurity.TLS?

        private struct State {
            var endpointIndex = 0
            var tokens: [String: String] = [:]
            var connections: [String: EtcdConnection] = [:]
            var isShutDown = false
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
            tls = try configuration.tls.map { files throws(EtcdError) in try Self.tlsConfiguration(files) }
        }

        /// Closes every connection. Call it once, when done.
        package func shutdown() async {
            let connections = state.withLock { state in
                state.isShutDown = true
                defer { state.connections = [:] }
                return Array(state.connections.values)
            }
            for connection in connections { await connection.close() }
        }

        /// A client dropped without ``shutdown()`` (a caller that threw before it got there): its
        /// connections are closed in the background.
        deinit {
            for connection in state.withLock({ $0.connections.values }) { connection.closeLater() }
        }

        /// The endpoint calls go to now.
        package var currentEndpoint: String {
            let index = state.withLock { $0.endpointIndex }
            return configuration.endpoints[index % max(configuration.endpoints.count, 1)]
        }

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
            let machineID = KernelFile.line("/etc/machine-id")
            return machineID.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        }

        /// Moves on to the endpoint after `failed`, unless another call already did, and closes the
        /// connection to `failed`: a host holds one connection, to the endpoint it uses, and opens
        /// it again if it comes back. (Kept open, a stalled member's connection stayed with every
        /// host that left it: at 10,000 simulated hosts that overloaded their member at once, each
        /// held two or three, and the benchmark ran out of file descriptors.)
        package func rotate(after failed: String) {
            let left = state.withLock { state -> EtcdConnection? in
                let count = configuration.endpoints.count
                guard count > 1, configuration.endpoints[state.endpointIndex % count] == failed else { return nil }
                state.endpointIndex = (state.endpointIndex + 1) % count
                return state.connections.removeValue(forKey: failed)
            }
            left?.closeLater()
        }

        /// The connection to `endpoint`, opened now if there is none.
        func connection(to endpoint: String, operation: String) throws(EtcdError) -> EtcdConnection {
            let existing = state.withLock { state -> EtcdConnection?? in
                guard !state.isShutDown else { return .some(nil) }
                return state.connections[endpoint].map { .some($0) } ?? nil
            }
            switch existing {
            case .some(.some(let connection)): return connection
            case .some(.none):
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: "the client was shut down",
                    hint: "make a new client")
            case .none: break
            }
            let made = try EtcdConnection(endpoint: endpoint, tls: tls, operation: operation)
            let (kept, surplus) = state.withLock { state -> (EtcdConnection, EtcdConnection?) in
                if let other = state.connections[endpoint] { return (other, made) }
                state.connections[endpoint] = made
                return (made, nil)
            }
            surplus?.closeLater()
            kept.start()
            return kept
        }

        /// The authentication token cached for `endpoint`.
        func cachedToken(for endpoint: String) -> String? {
            state.withLock { $0.tokens[endpoint] }
        }

        /// Keeps `token` for `endpoint`; `nil` forgets it.
        func cache(token: String?, for endpoint: String) {
            state.withLock { $0.tokens[endpoint] = token }
        }
    }
#endif
