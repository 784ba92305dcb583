#if Fleet
    import EtcdFleetClient
    import Logging
    import Locking

    /// Many watches of the fleet's documents in this process, each with a connection of its own as
    /// each host has: this client's (``FleetBenchmarkSupport/watchFleet(_:from:logger:created:arrived:)``,
    /// as a daemon's fleet watches, without the environment it applies to) or bare ones
    /// (``FleetBenchmarkSupport/bareWatch(endpoint:prefix:from:created:arrived:)``, as etcdctl
    /// watches). Each records the revision of every change it receives in an ``Arrivals``.
    final class Watches: Sendable {
        enum Kind: String, Sendable {
            /// This client's watch: progress notifications, silence and leader checks, decoding.
            case client
            /// A bare Watch stream made with the generated stubs.
            case bare
        }

        private let tasks: [Task<Void, Never>]

        private init(tasks: [Task<Void, Never>]) {
            self.tasks = tasks
        }

        /// Starts `count` watches of `kind` from `revision`, watch `index` on `endpoints(index)` (a
        /// bare watch on the first of them), `batch` at a time (each batch in place before the next
        /// starts, so that a member's accept queue does not overflow), and returns once every one is
        /// in place.
        static func start(
            _ kind: Kind, count: Int, first: Int = 0, endpoints: @Sendable (Int) -> [String], prefix: String,
            from revision: Int64, requestTimeout: Duration, arrivals: Arrivals, batch: Int = 250, logger: Logger
        ) async throws -> Watches {
            var tasks: [Task<Void, Never>] = []
            let base = arrivals.createdCount
            for index in first..<(first + count) {
                let list = endpoints(index)
                var configuration = try EtcdConfiguration.resolve(
                    endpoints: list.joined(separator: ","), prefix: prefix, processEnvironment: [:])
                configuration?.requestTimeout = requestTimeout
                tasks.append(
                    Task { [configuration] in
                        do {
                            switch kind {
                            case .client:
                                guard let configuration else { return }
                                try await FleetBenchmarkSupport.watchFleet(
                                    configuration, from: revision, logger: logger, created: { arrivals.created() },
                                    arrived: { arrivals.delivered(revision: $0, at: .now) })
                            case .bare:
                                // Resumed after the last revision when it fails, as etcdctl's client
                                // (clientv3) does: a proxy may cancel a watch ("context canceled").
                                let last = Locked(revision - 1)
                                let announced = Locked(false)
                                while !Task.isCancelled {
                                    do {
                                        try await FleetBenchmarkSupport.bareWatch(
                                            endpoint: list[0], prefix: prefix, from: last.withLock { $0 } + 1,
                                            created: {
                                                if announced.withLock({ done in
                                                    defer { done = true }; return !done
                                                }) {
                                                    arrivals.created()
                                                }
                                            },
                                            arrived: { revision in
                                                last.withLock { $0 = revision }
                                                arrivals.delivered(revision: revision, at: .now)
                                            })
                                    } catch {
                                        if Task.isCancelled { break }
                                        progress("a bare watch ended, resumed: \(error)")
                                        try? await Task.sleep(for: .milliseconds(100))
                                    }
                                }
                            }
                        } catch {
                            if !Task.isCancelled { progress("a \(kind.rawValue) watch ended: \(error)") }
                        }
                    })
                let started = index - first + 1
                if started % batch == 0 || started == count {
                    let deadline = ContinuousClock.now + .seconds(60)
                    while arrivals.createdCount < base + started {
                        guard ContinuousClock.now < deadline else {
                            tasks.forEach { $0.cancel() }
                            throw BenchmarkFailure(
                                "\(arrivals.createdCount - base) of \(started) \(kind.rawValue) watches in place after 60 s"
                            )
                        }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    if started % 2000 == 0 { progress("\(started) of \(count) \(kind.rawValue) watches in place") }
                }
            }
            return Watches(tasks: tasks)
        }

        /// Cancels every watch and waits until each has closed its connection.
        func stop() async {
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
        }
    }
#endif
