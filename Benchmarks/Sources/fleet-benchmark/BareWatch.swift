import AsyncHTTPClient
import BenchmarkFixtures
import Foundation

/// The floor: a watch on the fleet's documents through etcd's JSON gateway (``EtcdGateway``),
/// consumed by a task that only notes when each message arrived (by its revision) and does
/// nothing with it.
///
/// Each watch has an HTTP client of its own, as each fleet's client has: a watch holds its
/// connection for as long as it runs, and one shared client opens at most 8 connections to a
/// member (AsyncHTTPClient's per-host limit), so the ninth watch would wait forever.
final class BareWatch: Sendable {
    private let task: Task<Void, Never>
    private let client: HTTPClient

    private init(task: Task<Void, Never>, client: HTTPClient) {
        self.task = task
        self.client = client
    }

    /// Starts watching `prefix` after `revision` and returns once etcd has created the watch.
    /// It records its arrivals in `arrivals` as bare watch number `index`.
    static func start(
        _ index: Int, endpoint: String, prefix: String, after revision: Int64, arrivals: Arrivals
    ) async throws -> BareWatch {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let gateway = EtcdGateway(endpoint: endpoint, client: client)
        let (created, createdContinuation) = AsyncStream<Result<Void, any Error>>.makeStream()
        let task = Task {
            do {
                for try await update in gateway.watchFleet(prefix: prefix, from: revision + 1) {
                    let now = ContinuousClock.now
                    switch update {
                    case .created: createdContinuation.yield(.success(()))
                    case .changes(let revision): arrivals.delivered(watch: index, revision: revision, at: now)
                    }
                }
            } catch {
                if !Task.isCancelled {
                    progress("the bare watch ended: \(error)")
                }
                createdContinuation.yield(.failure(error))
            }
            createdContinuation.finish()
        }
        let watch = BareWatch(task: task, client: client)
        for await result in created {
            if case .failure(let error) = result {
                await watch.stop()
                throw BenchmarkFailure("the bare watch did not start: \(error)")
            }
            return watch
        }
        await watch.stop()
        throw BenchmarkFailure("the bare watch did not start")
    }

    /// Stops watching and closes the client.
    func stop() async {
        task.cancel()
        _ = await task.value
        try? await client.shutdown()
    }
}
