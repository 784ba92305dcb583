import Foundation

/// The floor: a watch on the fleet's prefix through etcd's JSON gateway (``EtcdGateway``),
/// consumed by a task that only notes when each message arrived (by its revision) and does
/// nothing with it.
final class BareWatch: Sendable {
    private let task: Task<Void, Never>

    private init(task: Task<Void, Never>) {
        self.task = task
    }

    /// Starts watching `prefix` after `revision` and returns once etcd has created the watch.
    /// It records its arrivals in `arrivals` as bare watch number `index`.
    static func start(
        _ index: Int, endpoint: String, prefix: String, after revision: Int64, arrivals: Arrivals
    ) async throws -> BareWatch {
        let gateway = EtcdGateway(endpoint: endpoint)
        let (created, createdContinuation) = AsyncStream<Result<Void, any Error>>.makeStream()
        let task = Task {
            do {
                for try await update in gateway.watch(prefix: prefix, from: revision + 1) {
                    let now = ContinuousClock.now
                    switch update {
                    case .created: createdContinuation.yield(.success(()))
                    case .changes(let revision): arrivals.delivered(watch: index, revision: revision, at: now)
                    }
                }
            } catch {
                if !Task.isCancelled {
                    FileHandle.standardError.write(Data("... the bare watch ended: \(error)\n".utf8))
                }
                createdContinuation.yield(.failure(error))
            }
            createdContinuation.finish()
        }
        let watch = BareWatch(task: task)
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

    /// Stops watching.
    func stop() async {
        task.cancel()
        _ = await task.value
    }
}
