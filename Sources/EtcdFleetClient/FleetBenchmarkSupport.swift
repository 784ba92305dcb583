#if Fleet
    import GRPCCore
    package import Logging

    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// What `fleet-benchmark` needs of this client beyond its public API: the fleet's watch on its
    /// own, as a daemon's `EtcdFleet` makes it but without an environment to apply it to; a bare
    /// watch made with the generated gRPC client, to compare with; and the publishing
    /// transaction. Package API: it changes with the benchmark.
    package enum FleetBenchmarkSupport {
        /// Watches the fleet's documents under `configuration`'s prefix from `revision` on, as a
        /// daemon's fleet does: a client of its own (one HTTP/2 connection, to the endpoint this
        /// host's machine id picks), ``EtcdClient/watchFleet(from:)`` with progress notifications,
        /// the silence and leader checks, each change decoded. When the watch fails it moves to the
        /// next endpoint and resumes after the last revision, as the fleet does. Calls `created`
        /// once, when the first watch is in place, and `arrived` with the revision of each change.
        /// Returns when the calling task is cancelled, with the connection closed.
        package static func watchFleet(
            _ configuration: EtcdConfiguration, from revision: Int64, logger: Logger,
            created: @escaping @Sendable () -> Void, arrived: @escaping @Sendable (Int64) -> Void
        ) async throws {
            let client = try EtcdClient(configuration: configuration, logger: logger)
            var last = revision - 1
            var announced = false
            var delay = Duration.milliseconds(100)
            while !Task.isCancelled {
                let endpoint = client.currentEndpoint
                do {
                    for try await update in client.watchFleet(from: last + 1) {
                        switch update {
                        case .created:
                            if !announced {
                                announced = true
                                created()
                            }
                        case .changes(let revision, _):
                            last = revision
                            delay = .milliseconds(100)
                            arrived(revision)
                        case .compacted:
                            break
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.debug(
                        "benchmark watch lost", metadata: ["etcd_endpoint": "\(endpoint)", "error": "\(error)"])
                    client.rotate(after: endpoint)
                    // As the fleet's watch waits: 100 ms, doubled up to 2 s.
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(2))
                }
            }
            await client.shutdown()
        }

        /// A bare watch, as `etcdctl watch` makes one: a gRPC client of its own on `endpoint`
        /// (`http://127.0.0.1:PORT`; one HTTP/2 connection) and one Watch stream made with the
        /// generated client on the same keys as the fleet's (`PREFIX/Environments.plist` to the end
        /// of `PREFIX/Environments.plist.d/`), without progress notifications, no check beside it,
        /// and nothing decoded past the protobuf message: `arrived` gets the revision of the last
        /// event of each message. Calls `created` when etcd has created the watch; returns when the
        /// calling task is cancelled; throws when the stream fails.
        package static func bareWatch(
            endpoint: String, prefix: String, from revision: Int64, created: @escaping @Sendable () -> Void,
            arrived: @escaping @Sendable (Int64) -> Void
        ) async throws {
            let connection = try EtcdConnection(endpoint: endpoint, tls: nil, operation: "bare watch")
            connection.start()
            var create = Etcdserverpb_WatchCreateRequest()
            create.key = FleetState.mainKey(prefix: prefix).etcdKey
            create.rangeEnd = rangeEnd(ofPrefix: FleetState.dropInDirectory(prefix: prefix))
            create.startRevision = revision
            var request = Etcdserverpb_WatchRequest()
            request.requestUnion = .createRequest(create)
            do {
                try await connection.watch.watch(
                    metadata: [:], options: .defaults,
                    requestProducer: { [request] writer in
                        try await writer.write(request)
                        // The request stream stays open while the watch lasts.
                        while true { try await Task.sleep(for: .seconds(3600)) }
                    },
                    onResponse: { response in
                        for try await message in response.messages {
                            if message.created { created() }
                            if let last = message.events.last { arrived(last.kv.modRevision) }
                        }
                    })
            } catch {
                await connection.close()
                if Task.isCancelled { return }
                throw error
            }
            await connection.close()
        }

        /// Writes the fleet's documents as `envctl publish` does, with a client of its own.
        package final class Writer: Sendable {
            private let client: EtcdClient
            private let prefix: String

            /// A writer under `configuration`'s prefix; nothing is sent until the first call.
            package init(_ configuration: EtcdConfiguration, logger: Logger) throws {
                client = try EtcdClient(configuration: configuration, logger: logger)
                prefix = configuration.prefix
            }

            /// Writes `key` unconditionally; returns the revision.
            @discardableResult
            package func put(_ key: String, _ value: Data) async throws -> Int64 {
                try await client.put(key, value)
            }

            /// Writes the main document `PREFIX/Environments.plist` in one transaction that succeeds
            /// only if none of the fleet's documents changed after `revision`, as `envctl publish`
            /// writes; returns the revision written, or `nil` if someone else wrote since.
            package func publish(_ document: Data, ifUnchangedSince revision: Int64) async throws -> Int64? {
                try await client.commit(
                    puts: [(FleetState.mainKey(prefix: prefix), document)], deletes: [], prefix: prefix,
                    ifUnchangedSince: revision)
            }

            /// The revision the main document was last written at, and the cluster's revision.
            package func revisions() async throws -> (document: Int64, store: Int64) {
                let read = try await client.range(prefix: FleetState.mainKey(prefix: prefix))
                let document = read.keyValues.first { $0.key == FleetState.mainKey(prefix: prefix) }
                return (document?.modRevision ?? 0, read.revision)
            }

            /// Closes the connection.
            package func shutdown() async {
                await client.shutdown()
            }
        }
    }
#endif
