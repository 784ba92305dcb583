#if Fleet
    import EtcdFleetClient
    import Testing

    /// A client that its owner drops without `shutdown()` — a test or a command that threw before
    /// it got there — closes itself: a debug build's HTTP client traps in its `deinit` otherwise,
    /// which took the whole test process down when an etcd test failed under load.
    @Suite struct ClientLifetimeTests {
        @Test func aClientDroppedWithoutShutdownDoesNotTrap() async throws {
            for _ in 0..<3 {
                // No etcd needed: nothing is asked of it.
                var client: EtcdClient? = try EtcdClient(
                    configuration: EtcdConfiguration(endpoints: ["http://localhost:1"], prefix: "/lifetime/"))
                #expect(client != nil)
                client = nil
            }
            // The background shutdowns finish; the process is still here to say so.
            try await Task.sleep(for: .milliseconds(200))
        }

        /// `shutdown()` returns (the time limit, not a hang, is what fails otherwise), and a call
        /// after it is refused with an error that says so, without connecting anywhere.
        @Test(.timeLimit(.minutes(1)))
        func aClientShutDownAndThenDroppedIsFine() async throws {
            let client = try EtcdClient(
                configuration: EtcdConfiguration(endpoints: ["http://localhost:1"], prefix: "/lifetime/"))
            await client.shutdown()
            let error = await #expect(throws: EtcdError.self) { _ = try await client.range(prefix: "/lifetime/") }
            #expect(error?.description.contains("the client was shut down") == true, "\(String(describing: error))")
        }
    }
#endif
