#if Fleet
    import ArgumentParser
    import Environments
    import EtcdFleetArguments
    import EtcdFleetClient
    import ThreadBridge

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// Where a fleet configuration lives in etcd and how to reach it (``EtcdArguments``, the
    /// options the daemon takes too), and envctl's reads of it.
    struct FleetOptions: ParsableArguments {
        @OptionGroup var etcd: EtcdArguments

        /// The etcd configuration, or `nil` without endpoints.
        func configuration(processEnvironment: [String: String] = ProcessInfo.processInfo.environment) throws
            -> EtcdConfiguration?
        {
            do {
                return try etcd.configuration(processEnvironment: processEnvironment)
            } catch {
                throw Failure("\(error)")
            }
        }

        /// The fleet's documents, read at one revision (the layout's keys only, as a daemon reads
        /// them).
        ///
        /// - Parameter acceptingViolation: Whether a state past a limit is returned (its
        ///   `violation` says which) rather than an error that names the limit.
        static func read(_ configuration: EtcdConfiguration, acceptingViolation: Bool = false) throws -> FleetState {
            let state = try blocking { client throws(EtcdError) in try await client.readFleet() }(configuration)
            if let violation = state.violation, !acceptingViolation { throw Failure("\(violation)") }
            return state
        }

        /// Runs `body` with a client for `configuration` and waits for it: envctl's commands are
        /// synchronous.
        static func blocking<Result: Sendable>(
            _ body: @escaping @Sendable (EtcdClient) async throws(EtcdError) -> Result
        ) -> (EtcdConfiguration) throws -> Result {
            { configuration in
                do {
                    // envctl-fleet's commands run on its main thread, never on the cooperative pool.
                    return try TaskWaiter.wait {
                        let client = try EtcdClient(configuration: configuration)
                        do {
                            let value = try await body(client)
                            await client.shutdown()
                            return value
                        } catch {
                            await client.shutdown()
                            throw error
                        }
                    }
                } catch {
                    throw Failure("\(error)")
                }
            }
        }
    }

    /// Documents held in memory, as the fleet layer of a configuration envctl builds.
    struct FixedDocuments: ConfigurationSource {
        var name: String { "fleet" }
        var held: [ConfigurationDocument]
        func documents() throws(EnvironmentError) -> [ConfigurationDocument] { held }
    }
#endif
