import AsyncHTTPClient
import Foundation
import NIOCore

/// The few calls of etcd's v3 JSON gateway the benchmark makes itself, over AsyncHTTPClient:
/// a put, a read of one key's revision, the publish transaction, and a bare watch. The fleet's
/// own client is the library's (through `EtcdFleet`); this one is the benchmark's instrument
/// and its floor, so that the benchmark needs nothing but the library's public API.
///
/// The gateway's JSON: keys and values are base64, 64-bit integers are strings, and a field at
/// its zero value is left out.
struct EtcdGateway: Sendable {
    /// A member's client URL, `http://127.0.0.1:PORT`.
    let endpoint: String
    private let client: HTTPClient

    init(endpoint: String, client: HTTPClient = .shared) {
        self.endpoint = endpoint
        self.client = client
    }

    /// Writes `value` at `key`; returns the revision of the write.
    func put(_ key: String, _ value: Data) async throws -> Int64 {
        let response: Header.Response = try await call(
            "/v3/kv/put", ["key": Self.base64(key), "value": value.base64EncodedString()])
        return response.revision
    }

    /// The revision `key` was last changed at (0: no such key), and the store's revision.
    func modRevision(of key: String) async throws -> (key: Int64, store: Int64) {
        struct Response: Decodable {
            struct KeyValue: Decodable { var mod_revision: String? }
            var header: Header?
            var kvs: [KeyValue]?
        }
        struct Range: Encodable {
            var key: String
            var keys_only = true
        }
        let response: Response = try await call("/v3/kv/range", Range(key: Self.base64(key)))
        return (response.kvs?.first?.mod_revision.flatMap { Int64($0) } ?? 0, response.header?.number ?? 0)
    }

    /// Writes `value` at `key` as `envctl publish` does: in one transaction that succeeds only if
    /// `key` is still at `revision` and nothing under `unchangedPrefix` changed after it. Returns
    /// the new revision, or `nil` when a comparison failed (someone else wrote).
    func publish(_ key: String, _ value: Data, ifAt revision: Int64, unchangedPrefix: String) async throws -> Int64? {
        struct Compare: Encodable {
            var key: String
            var range_end: String?
            var target = "MOD"
            var result: String
            var mod_revision: String
        }
        struct Put: Encodable { var request_put: [String: String] }
        struct Transaction: Encodable {
            var compare: [Compare]
            var success: [Put]
        }
        struct Response: Decodable {
            var header: Header?
            var succeeded: Bool?
        }
        let transaction = Transaction(
            compare: [
                Compare(key: Self.base64(key), result: "EQUAL", mod_revision: String(revision)),
                Compare(
                    key: Self.base64(unchangedPrefix), range_end: Self.rangeEnd(unchangedPrefix),
                    result: "LESS", mod_revision: String(revision + 1)),
            ],
            success: [Put(request_put: ["key": Self.base64(key), "value": value.base64EncodedString()])])
        let response: Response = try await call("/v3/kv/txn", transaction)
        return response.succeeded == true ? response.header?.number ?? 0 : nil
    }

    /// What a bare watch reports.
    enum WatchUpdate: Sendable {
        /// etcd created the watch.
        case created
        /// The changes of one revision arrived.
        case changes(revision: Int64)
    }

    /// Watches the fleet's documents under `prefix` from revision `revision` on, as a daemon's
    /// watch does (`Environments.plist` through the end of `Environments.plist.d/`; not the
    /// status keys under `.status/`), until the task is cancelled: one long `POST /v3/watch`
    /// whose answer is a stream of JSON messages, each ending in a newline.
    func watchFleet(prefix: String, from revision: Int64) -> AsyncThrowingStream<WatchUpdate, any Error> {
        let request =
            (try? JSONSerialization.data(withJSONObject: [
                "create_request": [
                    "key": Self.base64(prefix + "Environments.plist"),
                    "range_end": Self.rangeEnd(prefix + "Environments.plist.d/"),
                    "start_revision": String(revision),
                ]
            ])) ?? Data()
        let url = endpoint + "/v3/watch"
        let client = client
        return AsyncThrowingStream { continuation in
            let task = Task {
                struct Message: Decodable {
                    struct Result: Decodable {
                        var header: Header?
                        var created: Bool?
                        var canceled: Bool?
                        /// Of an event, only its revision is read: the watch counts arrivals.
                        struct Event: Decodable {
                            struct KeyValue: Decodable { var mod_revision: String? }
                            var kv: KeyValue?
                        }
                        var events: [Event]?
                    }
                    var result: Result?
                }
                do {
                    var call = HTTPClientRequest(url: url)
                    call.method = .POST
                    call.body = .bytes(ByteBuffer(bytes: request))
                    let response = try await client.execute(call, timeout: .hours(24))
                    guard response.status == .ok else { throw BenchmarkFailure("watch: HTTP \(response.status.code)") }
                    var pending: [UInt8] = []
                    for try await chunk in response.body {
                        pending += chunk.readableBytesView
                        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                            let line = Data(pending[..<newline])
                            pending.removeSubrange(...newline)
                            let message = try JSONDecoder().decode(Message.self, from: line)
                            guard let result = message.result else {
                                throw BenchmarkFailure("watch: \(line.count) bytes without a result")
                            }
                            if result.canceled == true { throw BenchmarkFailure("watch: etcd cancelled it") }
                            if result.created == true { continuation.yield(.created) }
                            // By the events' revisions: one message may carry several
                            // revisions, and its header names the newest the member had.
                            var revisions: [Int64] = []
                            for event in result.events ?? [] {
                                let revision =
                                    event.kv?.mod_revision.flatMap { Int64($0) } ?? result.header?.number ?? 0
                                if revisions.last != revision { revisions.append(revision) }
                            }
                            for revision in revisions { continuation.yield(.changes(revision: revision)) }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private func call<Response: Decodable>(_ path: String, _ body: some Encodable) async throws -> Response {
        var request = HTTPClientRequest(url: endpoint + path)
        request.method = .POST
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        let response = try await client.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else {
            throw BenchmarkFailure("\(path): HTTP \(response.status.code): \(String(buffer: bytes).prefix(200))")
        }
        return try JSONDecoder().decode(Response.self, from: Data(bytes.readableBytesView))
    }

    /// The response header every call carries.
    struct Header: Decodable {
        var revision: String?
        var number: Int64 { revision.flatMap { Int64($0) } ?? 0 }

        /// A response of which only the header matters.
        struct Response: Decodable {
            var header: Header?
            var revision: Int64 { header?.number ?? 0 }
        }
    }

    private static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    /// The first key after every key that starts with `prefix` (etcd's `range_end`), in base64.
    private static func rangeEnd(_ prefix: String) -> String {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last, last == 0xFF { bytes.removeLast() }
        guard !bytes.isEmpty else { return Data([0]).base64EncodedString() }
        bytes[bytes.count - 1] += 1
        return Data(bytes).base64EncodedString()
    }
}
