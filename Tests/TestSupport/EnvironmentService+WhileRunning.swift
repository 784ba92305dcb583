package import EnvironmentsDaemon

extension EnvironmentService {
    /// Runs the service while `body` runs, once it is ready (its files watched, its socket
    /// served), and stops it after.
    package func whileRunning<Result: Sendable>(_ body: @Sendable () async throws -> Result)
        async throws -> Result
    {
        try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                try await self.run()
                return nil
            }
            await reloader.waitUntilReady()
            let result = try await body()
            group.cancelAll()
            return result
        }
    }
}
