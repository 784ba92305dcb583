#if Fleet
    import GRPCCore
    import GRPCNIOTransportHTTP2Posix
    import Locking

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// One endpoint's HTTP/2 connection and the gRPC clients of etcd's services on it: every call
    /// and watch of an ``EtcdClient`` on that endpoint shares it.
    final class EtcdConnection: Sendable {
        typealias Transport = HTTP2ClientTransport.Posix

        /// The member's client URL.
        let endpoint: String
        private let grpc: GRPCClient<Transport>
        /// The task that runs the connection, once started.
        private let running = Locked<Task<Void, Never>?>(nil)

        /// How long a lost connection waits before it is tried again: short, so that a member
        /// that comes back is used again soon (gRPC's default grows to two minutes).
        private static let backoff = HTTP2ClientTransport.Config.Backoff(
            initial: .milliseconds(100), max: .seconds(2), multiplier: 1.6, jitter: 0.2)

        /// A connection to `endpoint` (`http://HOST:PORT` or `https://HOST:PORT`), not opened yet.
        init(
            endpoint: String, tls: HTTP2ClientTransport.Posix.TransportSecurity.TLS?, operation: String
        ) throws(EtcdError) {
            self.endpoint = endpoint
            guard let url = URL(string: endpoint), let host = url.host, !host.isEmpty,
                url.scheme == "http" || url.scheme == "https"
            else {
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: "not an http:// or https:// URL with a host",
                    hint: "list the members' client URLs, for example https://etcd-1.cluster.example:2379")
            }
            let port = url.port ?? 2379
            let security: Transport.TransportSecurity =
                if url.scheme == "https" { .tls(tls ?? .defaults) } else { .plaintext }
            do {
                let transport = try Transport(
                    target: Self.target(host: host, port: port), transportSecurity: security,
                    config: .defaults { $0.backoff = Self.backoff })
                grpc = GRPCClient(transport: transport)
            } catch {
                throw EtcdError(
                    operation: operation, endpoint: endpoint, message: "cannot set up the connection: \(error)")
            }
        }

        /// Where to connect: an IP address as it is (the certificate is then checked against the
        /// address, with no name sent), a name through DNS (sent as the TLS server name, and
        /// checked against the certificate).
        private static func target(host: String, port: Int) -> any ResolvableTarget {
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) {
                return ResolvableTargets.IPv4.ipv4(address: bare, port: port)
            }
            if bare.contains(":") { return ResolvableTargets.IPv6.ipv6(address: bare, port: port) }
            return ResolvableTargets.DNS.dns(host: host, port: port)
        }

        /// etcd's key-value service on this connection.
        var kv: Etcdserverpb_KV.Client<Transport> { .init(wrapping: grpc) }
        /// etcd's watch service on this connection.
        var watch: Etcdserverpb_Watch.Client<Transport> { .init(wrapping: grpc) }
        /// etcd's lease service on this connection.
        var lease: Etcdserverpb_Lease.Client<Transport> { .init(wrapping: grpc) }
        /// etcd's authentication service on this connection.
        var auth: Etcdserverpb_Auth.Client<Transport> { .init(wrapping: grpc) }
        /// etcd's maintenance service (a member's status) on this connection.
        var maintenance: Etcdserverpb_Maintenance.Client<Transport> { .init(wrapping: grpc) }

        /// Runs the connection in a task of its own, once.
        func start() {
            running.withLock { task in
                guard task == nil else { return }
                task = Task { [grpc] in try? await grpc.runConnections() }
            }
        }

        /// Closes the connection: calls still under way end with an error.
        func close() async {
            let task = running.withLock { $0 }
            grpc.beginGracefulShutdown()
            task?.cancel()
            await task?.value
        }

        /// Closes the connection in the background.
        func closeLater() {
            grpc.beginGracefulShutdown()
            running.withLock { $0?.cancel() }
        }
    }
#endif
