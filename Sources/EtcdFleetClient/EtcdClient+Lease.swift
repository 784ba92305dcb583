#if Fleet
    import GRPCCore

    /// Leases: a host's status key lives as long as its lease.
    extension EtcdClient {
        /// Grants a lease of `ttl` seconds and returns its id.
        package func grantLease(ttl: Int) async throws(EtcdError) -> Int64 {
            let operation = "grant a lease of \(ttl) s"
            var request = Etcdserverpb_LeaseGrantRequest()
            request.ttl = Int64(ttl)
            let response = try await call(operation) { [request] connection, metadata, options in
                try await connection.lease.leaseGrant(request, metadata: metadata, options: options)
            }
            guard response.id != 0 else {
                throw EtcdError(
                    operation: operation, message: response.error.isEmpty ? "etcd gave no lease id" : response.error)
            }
            return response.id
        }

        /// Renews `lease` once (one message on a keep-alive stream of its own): its TTL in seconds
        /// now, or 0 when etcd no longer has it (it expired: grant a new one).
        package func keepAlive(lease: Int64) async throws(EtcdError) -> Int {
            var request = Etcdserverpb_LeaseKeepAliveRequest()
            request.id = lease
            let response = try await call("renew lease \(lease)") { [request] connection, metadata, options in
                try await connection.lease.leaseKeepAlive(
                    metadata: metadata, options: options,
                    requestProducer: { writer in try await writer.write(request) },
                    onResponse: { response in
                        for try await message in response.messages { return message }
                        return Etcdserverpb_LeaseKeepAliveResponse()
                    })
            }
            return Int(response.ttl)
        }

        /// Revokes `lease`: etcd deletes every key attached to it at once.
        package func revokeLease(_ lease: Int64) async throws(EtcdError) {
            var request = Etcdserverpb_LeaseRevokeRequest()
            request.id = lease
            _ = try await call("revoke lease \(lease)") { [request] connection, metadata, options in
                try await connection.lease.leaseRevoke(request, metadata: metadata, options: options)
            }
        }
    }
#endif
