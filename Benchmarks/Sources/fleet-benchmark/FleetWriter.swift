import Foundation

/// Writes the fleet's main document as `envctl publish` does: one transaction that succeeds only
/// if none of the fleet's documents changed after the revision last seen (the main document
/// still at its revision, nothing under `Environments.plist.d/` newer), so that etcd does the
/// same work for a measured change as for a publish. envctl reads the fleet first and validates
/// it; that happens before its transaction, and this writer skips it (it knows the revision it
/// wrote last, and reads again only when someone else wrote since).
actor FleetWriter {
    private let gateway: EtcdGateway
    private let prefix: String
    /// The fleet's main document, `PREFIX/Environments.plist`.
    let key: String
    /// The revision the main document was last written at, as far as this writer knows.
    private var revision: Int64

    init(gateway: EtcdGateway, prefix: String) async throws {
        self.gateway = gateway
        self.prefix = prefix
        key = prefix + "Environments.plist"
        revision = try await gateway.put(key, FleetDocument.data(counter: 0))
    }

    /// Writes `document`; returns its revision and the instant just before the transaction
    /// that wrote it was sent (after a read, when someone else wrote since).
    func publish(_ document: Data) async throws -> (revision: Int64, start: ContinuousClock.Instant) {
        for _ in 0..<3 {
            let start = ContinuousClock.now
            if let written = try await gateway.publish(
                key, document, ifAt: revision, unchangedPrefix: prefix + "Environments.plist.d/")
            {
                revision = written
                return (written, start)
            }
            // Someone else (envctl) published: read, as envctl does before its transaction.
            try await refresh()
        }
        throw BenchmarkFailure("the transaction failed three times: someone else keeps writing under \(prefix)")
    }

    /// Reads the main document's revision again (after a publish by another process).
    func refresh() async throws {
        revision = try await gateway.modRevision(of: key).key
    }
}
