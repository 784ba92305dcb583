#if Vapor
    import EnvironmentsDaemon
    import Vapor

    /// The application's server, as Vapor's `serve` command starts it, that tells the
    /// configuration service once it serves: after `start(address:)` returns, the port is bound and
    /// accepts connections, and `READY=1` goes out (``EnvironmentServiceRunner`` installs it when
    /// the application boots, around the server the application configured).
    ///
    /// A start that throws (the address is in use, a permission is missing) says nothing: systemd
    /// never hears `READY=1`, and the start fails when the process exits.
    struct ServingAnnouncer: Server {
        /// The server the application configured (Vapor's HTTP server, unless it chose another).
        let base: any Server
        let service: EnvironmentService

        var onShutdown: EventLoopFuture<Void> { base.onShutdown }

        func start(address: BindAddress?) async throws {
            try await base.start(address: address)
            await service.applicationIsServing()
        }

        @available(*, noasync, message: "Use the async start(address:) method instead.")
        func start(address: BindAddress?) throws {
            try base.start(address: address)
            let service = self.service
            Task { await service.applicationIsServing() }
        }

        func shutdown() async {
            await base.shutdown()
        }

        @available(*, noasync, message: "Use the async shutdown() method instead.")
        func shutdown() {
            base.shutdown()
        }
    }
#endif
