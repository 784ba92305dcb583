#if Fleet
    import ArgumentParser
    import Environments
    import EnvironmentsEtcd
    import EtcdFleetArguments
    import EtcdFleetClient
    import ExampleDaemonKit
    import ServiceLifecycle

    /// The example daemon in fleet mode: the shared configuration in etcd (or its local cache)
    /// below this host's files, applied live through a watch.
    @main
    struct ExampleFleetDaemon: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "example-fleet-daemon",
            abstract: "The example daemon with its fleet's configuration from etcd, below this host's files.",
            version: LibraryVersion.current)

        @OptionGroup var arguments: ExampleArguments

        @OptionGroup var etcd: EtcdArguments

        func run() async throws {
            var fleet: EtcdFleet?
            try await ExampleDaemonRun.run(
                arguments, build: .embedded,
                configure: { options, logger in
                    guard var etcd = try etcd.configuration() else {
                        throw ValidationError(
                            "fleet mode needs --etcd-endpoints (or $ENVIRONMENTS_ETCD_ENDPOINTS); without a fleet, run example-daemon"
                        )
                    }
                    // Reported in this host's status key (`envctl fleet status`) beside the library's.
                    etcd.status.applicationVersion = Self.configuration.version
                    // The fleet's documents from etcd, else from the local cache, as the layer below the files.
                    let connected = try await EtcdFleet.connect(etcd, logger: logger)
                    connected.apply(to: &options)
                    fleet = connected
                },
                more: { service in
                    // The watch: every change in etcd goes through the same reload as a file change.
                    guard let fleet else { return [] }
                    return [.init(service: await fleet.service(for: service))]
                })
        }
    }
#endif
