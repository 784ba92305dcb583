#if Fleet
    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// Reads and writes: ranges, puts and the fleet's transactions.
    extension EtcdClient {
        /// Every key under `prefix` and the revision they were read at: one consistent set (tests
        /// and tools; a fleet reads its documents only, with ``readFleet()``).
        package func range(prefix: String) async throws(EtcdError) -> (keyValues: [EtcdKeyValue], revision: Int64) {
            var request = Etcdserverpb_RangeRequest()
            request.key = prefix.etcdKey
            request.rangeEnd = rangeEnd(ofPrefix: prefix)
            let response = try await range(request, operation: "range \(prefix)")
            return (response.kvs.map(EtcdKeyValue.init), response.header.revision)
        }

        /// The keys under `prefix`, at most `limit` of them and `maximumBytes` of answer: a bounded
        /// listing (the hosts' status keys). `more` says whether keys were left out.
        package func range(prefix: String, limit: Int, maximumBytes: Int) async throws(EtcdError) -> (
            keyValues: [EtcdKeyValue], revision: Int64, more: Bool
        ) {
            var request = Etcdserverpb_RangeRequest()
            request.key = prefix.etcdKey
            request.rangeEnd = rangeEnd(ofPrefix: prefix)
            request.limit = Int64(limit)
            let response = try await range(request, operation: "range \(prefix)", maximumResponseSize: maximumBytes)
            return (response.kvs.map(EtcdKeyValue.init), response.header.revision, response.more)
        }

        /// One range call, on whichever endpoint answers.
        func range(
            _ request: Etcdserverpb_RangeRequest, operation: String,
            maximumResponseSize: Int = EtcdClient.maximumResponseSize
        ) async throws(EtcdError) -> Etcdserverpb_RangeResponse {
            try await call(operation, maximumResponseSize: maximumResponseSize) {
                [request] connection, metadata, options in
                try await connection.kv.range(request, metadata: metadata, options: options)
            }
        }

        /// The most keys ``commit(puts:deletes:deletingPrefixes:prefix:ifUnchangedSince:expecting:)``
        /// can expect: etcd refuses a transaction with more than `--max-txn-ops` (128 by default)
        /// comparisons; one covers the drop-in directory, and one the main document when it is not
        /// expected.
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
            var request = Etcdserverpb_TxnRequest()
            // Every drop-in key was last changed at or before `revision`; so was the main document
            // (when it is expected, its own comparison says more).
            if let revision {
                let directory = FleetState.dropInDirectory(prefix: prefix)
                request.compare.append(
                    Self.compare(directory, rangeEnd: rangeEnd(ofPrefix: directory), .less, revision + 1))
                if expecting[mainKey] == nil { request.compare.append(Self.compare(mainKey, .less, revision + 1)) }
            }
            request.compare += expecting.keys.sorted().map { Self.compare($0, .equal, expecting[$0]!) }
            request.success =
                puts.map { Self.put($0.key, $0.value) } + deletes.map { Self.delete($0) }
                + deletingPrefixes.map { Self.delete($0, rangeEnd: rangeEnd(ofPrefix: $0)) }
            let response = try await call("transaction under \(prefix)") { [request] connection, metadata, options in
                try await connection.kv.txn(request, metadata: metadata, options: options)
            }
            return response.succeeded ? response.header.revision : nil
        }

        /// A comparison of the last-change revision of `key` (or of every key up to `rangeEnd`).
        private static func compare(
            _ key: String, rangeEnd: Data? = nil, _ result: Etcdserverpb_Compare.CompareResult, _ modRevision: Int64
        ) -> Etcdserverpb_Compare {
            var compare = Etcdserverpb_Compare()
            compare.key = key.etcdKey
            if let rangeEnd { compare.rangeEnd = rangeEnd }
            compare.target = .mod
            compare.result = result
            compare.targetUnion = .modRevision(modRevision)
            return compare
        }

        private static func put(_ key: String, _ value: Data) -> Etcdserverpb_RequestOp {
            var put = Etcdserverpb_PutRequest()
            put.key = key.etcdKey
            put.value = value
            var operation = Etcdserverpb_RequestOp()
            operation.request = .requestPut(put)
            return operation
        }

        private static func delete(_ key: String, rangeEnd: Data? = nil) -> Etcdserverpb_RequestOp {
            var delete = Etcdserverpb_DeleteRangeRequest()
            delete.key = key.etcdKey
            if let rangeEnd { delete.rangeEnd = rangeEnd }
            var operation = Etcdserverpb_RequestOp()
            operation.request = .requestDeleteRange(delete)
            return operation
        }

        /// Writes one key (tests and tools; a fleet publishes with
        /// ``commit(puts:deletes:deletingPrefixes:prefix:ifUnchangedSince:expecting:)``), attached
        /// to `lease` unless it is 0 (a host's status key), and returns the revision.
        @discardableResult
        package func put(_ key: String, _ value: Data, lease: Int64 = 0) async throws(EtcdError) -> Int64 {
            var request = Etcdserverpb_PutRequest()
            request.key = key.etcdKey
            request.value = value
            request.lease = lease
            let response = try await call("put \(key)") { [request] connection, metadata, options in
                try await connection.kv.put(request, metadata: metadata, options: options)
            }
            return response.header.revision
        }
    }
#endif
