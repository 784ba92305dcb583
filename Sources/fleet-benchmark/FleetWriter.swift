#if Fleet
    import EtcdFleetClient
    import Foundation
    import Logging

    /// Writes the fleet's main document as `envctl publish` does: one transaction that succeeds only
    /// if none of the fleet's documents changed after the revision last seen, so that etcd does the
    /// same work for a measured change as for a publish (envctl's read and validation before it are
    /// not timed). Through this client's own code (`FleetBenchmarkSupport.Writer`, gRPC).
    actor FleetWriter {
        private let writer: FleetBenchmarkSupport.Writer
        /// The fleet's main document, `PREFIX/Environments.plist`.
        let key: String
        /// The revision the main document was last written at, as far as this writer knows.
        private var revision: Int64

        init(endpoints: [String], prefix: String, logger: Logger) async throws {
            guard
                let configuration = try EtcdConfiguration.resolve(
                    endpoints: endpoints.joined(separator: ","), prefix: prefix)
            else { throw BenchmarkFailure("no etcd endpoints") }
            writer = try FleetBenchmarkSupport.Writer(configuration, logger: logger)
            key = prefix + "Environments.plist"
            revision = try await writer.put(key, FleetDocument.data(counter: 0))
        }

        /// The cluster's revision now.
        func storeRevision() async throws -> Int64 {
            try await writer.revisions().store
        }

        /// Writes `document`; returns its revision and the instant just before the transaction that
        /// wrote it was sent.
        func publish(_ document: Data) async throws -> (revision: Int64, start: ContinuousClock.Instant) {
            for _ in 0..<3 {
                let start = ContinuousClock.now
                if let written = try await writer.publish(document, ifUnchangedSince: revision) {
                    revision = written
                    return (written, start)
                }
                revision = try await writer.revisions().document
            }
            throw BenchmarkFailure("the transaction failed three times: someone else keeps writing")
        }

        /// Writes `count` status keys (`PREFIX/.status/bench-N`) of a daemon's size, `concurrency` at
        /// a time: the status reports' write load.
        func writeStatus(count: Int, prefix: String, concurrency: Int) async throws {
            let value = Data(String(repeating: "x", count: 600).utf8)
            let writer = writer
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<count {
                    if index >= concurrency { try await group.next() }
                    group.addTask { try await writer.put("\(prefix).status/bench-\(index)", value) }
                }
                try await group.waitForAll()
            }
        }

        func shutdown() async {
            await writer.shutdown()
        }
    }
#endif
