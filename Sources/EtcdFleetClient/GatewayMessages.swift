#if Fleet
    import Foundation

    // The JSON of etcd's v3 gateway (grpc-gateway over etcdserverpb): keys and values are base64,
    // 64-bit integers are strings, fields at their zero value are left out.

    /// A key and its value at a revision.
    package struct EtcdKeyValue: Sendable, Hashable {
        /// The key.
        package var key: String
        /// The value's bytes.
        package var value: Data
        /// The revision of the key's last change.
        package var modRevision: Int64
        /// The lease the key is attached to, or 0 for none.
        package var lease: Int64 = 0

        /// A key, its value and the revision of its last change.
        package init(key: String, value: Data, modRevision: Int64, lease: Int64 = 0) {
            self.key = key
            self.value = value
            self.modRevision = modRevision
            self.lease = lease
        }
    }

    /// The response header every call carries.
    struct GatewayHeader: Decodable {
        var revision: String?
        var revisionNumber: Int64 { revision.flatMap(Int64.init) ?? 0 }
    }

    struct GatewayKeyValue: Decodable {
        var key: String?
        var value: String?
        var mod_revision: String?
        var lease: String?

        func decoded() -> EtcdKeyValue? {
            guard let key, let keyData = Data(base64Encoded: key) else { return nil }
            return EtcdKeyValue(
                key: String(decoding: keyData, as: UTF8.self),
                value: value.flatMap { Data(base64Encoded: $0) } ?? Data(),
                modRevision: mod_revision.flatMap(Int64.init) ?? 0, lease: lease.flatMap(Int64.init) ?? 0)
        }
    }

    struct RangeRequest: Encodable {
        var key: String
        var range_end: String?
        /// Read at this revision (the gateway takes 64-bit integers as strings); `nil`: the newest.
        var revision: String?
        /// At most this many keys; `more` says whether there were others.
        var limit: String?
        /// Names and revisions only, no values.
        var keys_only: Bool?
        /// `ASCEND` or `DESCEND`.
        var sort_order: String?
        /// What to sort by: `KEY`, `MOD`, ...
        var sort_target: String?
    }

    struct RangeResponse: Decodable {
        var header: GatewayHeader?
        var kvs: [GatewayKeyValue]?
        var more: Bool?
    }

    struct WatchCreateRequest: Encodable {
        struct Create: Encodable {
            var key: String
            var range_end: String
            var start_revision: String
        }
        var create_request: Create
    }

    /// One message of a watch stream.
    struct WatchMessage: Decodable {
        struct Result: Decodable {
            struct Event: Decodable {
                var type: String?
                var kv: GatewayKeyValue?
            }
            var header: GatewayHeader?
            var created: Bool?
            var canceled: Bool?
            var compact_revision: String?
            var cancel_reason: String?
            var events: [Event]?
        }
        var result: Result?
        var error: GatewayError?
    }

    struct GatewayError: Decodable {
        var error: String?
        var message: String?
        var code: Int?
    }

    struct AuthenticateRequest: Encodable {
        var name: String
        var password: String
    }

    struct AuthenticateResponse: Decodable {
        var token: String?
    }

    struct PutRequest: Encodable {
        var key: String
        var value: String
        /// The lease to attach the key to (an integer as a string); `nil`: none.
        var lease: String?
    }

    /// `/v3/lease/grant`: a lease of `TTL` seconds (`ID` 0: etcd picks the id).
    struct LeaseGrantRequest: Encodable {
        var TTL: String
        var ID: String = "0"
    }

    struct LeaseGrantResponse: Decodable {
        var header: GatewayHeader?
        var ID: String?
        var TTL: String?
        var error: String?
    }

    /// `/v3/lease/keepalive` and `/v3/lease/revoke`: the lease `ID`.
    struct LeaseRequest: Encodable {
        var ID: String
    }

    /// One answer of the keep-alive stream: the lease's new TTL, absent or 0 when the lease is gone.
    struct LeaseKeepAliveResponse: Decodable {
        struct Result: Decodable {
            var ID: String?
            var TTL: String?
        }
        var result: Result?
        var error: GatewayError?
    }

    struct EmptyResponse: Decodable {
        var header: GatewayHeader?
    }

    struct TransactionRequest: Encodable {
        struct Compare: Encodable {
            var key: String
            var range_end: String?
            var target: String
            var result: String
            var mod_revision: String?
        }
        struct Operation: Encodable {
            struct Put: Encodable {
                var key: String
                var value: String
            }
            struct Delete: Encodable {
                var key: String
                var range_end: String?
            }
            var request_put: Put?
            var request_delete_range: Delete?
        }
        var compare: [Compare]
        var success: [Operation]
        var failure: [Operation]
    }

    struct TransactionResponse: Decodable {
        var header: GatewayHeader?
        var succeeded: Bool?
    }

    extension String {
        /// The UTF-8 bytes, base64: how the gateway spells keys.
        var base64: String { Data(utf8).base64EncodedString() }
    }

    /// The end of the range of every key that starts with `prefix`: the prefix with its last byte
    /// incremented (etcd's `--prefix`).
    func rangeEnd(ofPrefix prefix: String) -> String {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return Data(bytes).base64EncodedString()
            }
            bytes.removeLast()
        }
        return Data([0]).base64EncodedString()
    }
#endif
