#if Fleet
    import ArgumentParser
    import Environments
    import EtcdFleetClient

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// `envctl-fleet documents`: the fleet's documents, read at one revision, as a binary property
    /// list on standard output, for envctl: `envctl show --etcd-endpoints …` (and `get`, `diff`,
    /// `check`, `explain`, `edit`, `set`) runs it and applies them below the files.
    ///
    /// The output is an array of dictionaries, lowest first, each with `origin` (a string such as
    /// `etcd:/fleet/app/Environments.plist@42`) and `data` (the document's bytes). A state past a
    /// fleet limit is refused here, as a daemon refuses it, so the output is at most the limit on
    /// all documents together (`ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES`, 64 MiB by default) and a little
    /// framing.
    struct Documents: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the fleet's documents as a property list, for envctl's reads below the files.",
            shouldDisplay: false)

        @OptionGroup var fleet: FleetOptions

        func run() throws {
            guard let configuration = try fleet.configuration() else {
                throw Failure(
                    "the fleet's documents need --etcd-endpoints (or $\(EtcdConfiguration.endpointsVariable))")
            }
            writeAll(STDOUT_FILENO, DocumentsPropertyList.encode(try FleetOptions.read(configuration).documents))
        }
    }
#endif
