import ArgumentParser
@_spi(Integrations) import Environments
import EtcdFleetArguments
import EtcdFleetClient
import Foundation
@_spi(Integrations) import Locking

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
            let outcome = Locked<Swift.Result<Result, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Task {
                do {
                    let client = try EtcdClient(configuration: configuration)
                    do {
                        let value = try await body(client)
                        outcome.withLock { $0 = .success(value) }
                    } catch {
                        outcome.withLock { $0 = .failure(error) }
                    }
                    await client.shutdown()
                } catch {
                    outcome.withLock { $0 = .failure(error) }
                }
                done.signal()
            }
            done.wait()
            switch outcome.withLock({ $0 })! {
            case .success(let value): return value
            case .failure(let error): throw Failure("\(error)")
            }
        }
    }
}

/// Documents held in memory, as the fleet layer of a configuration envctl builds.
struct FixedDocuments: ConfigurationLayer {
    var held: [ConfigurationDocument]
    func documents() throws(EnvironmentError) -> [ConfigurationDocument] { held }
}
