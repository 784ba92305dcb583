import ArgumentParser
import Environments
import EtcdFleetClient
import Foundation

/// Where a fleet configuration lives in etcd and how to reach it: `--etcd-endpoints`,
/// `--etcd-prefix`, TLS (`--etcd-cacert`, `--etcd-cert`, `--etcd-key`) and a user
/// (`--etcd-user`, `--etcd-password-file`), or their `$ENVIRONMENTS_ETCD_*` variables, as the
/// daemon takes them (`EtcdConfiguration.resolve`).
struct FleetOptions: ParsableArguments {
    @Option(
        name: .customLong("etcd-endpoints"),
        help: "Read the fleet configuration from these etcd members, below the files (URL[,URL...]).")
    var etcdEndpoints: String?

    @Option(name: .customLong("etcd-prefix"), help: "The fleet's key prefix in etcd, e.g. /fleet/example-daemon/.")
    var etcdPrefix: String?

    @Option(
        name: .customLong("etcd-cacert"),
        help: "The CA bundle (PEM) that signed the etcd members' certificates (default: $ENVIRONMENTS_ETCD_CACERT).")
    var etcdCertificateAuthority: String?

    @Option(
        name: .customLong("etcd-cert"),
        help: "This client's TLS certificate (PEM) for etcd's --client-cert-auth (default: $ENVIRONMENTS_ETCD_CERT).")
    var etcdCertificate: String?

    @Option(
        name: .customLong("etcd-key"),
        help:
            "The private key (PEM) of --etcd-cert (default: $ENVIRONMENTS_ETCD_KEY, else the credential etcd-client.key)."
    )
    var etcdKey: String?

    @Option(
        name: .customLong("etcd-user"),
        help: "The etcd user to authenticate as (default: $ENVIRONMENTS_ETCD_USER, else the credential etcd-user).")
    var etcdUser: String?

    @Option(
        name: .customLong("etcd-password-file"),
        help:
            "The file that holds the etcd user's password (default: $ENVIRONMENTS_ETCD_PASSWORD_FILE, else the credential etcd-password); never the password itself."
    )
    var etcdPasswordFile: String?

    /// The etcd configuration, or `nil` without endpoints.
    func configuration(processEnvironment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> EtcdConfiguration?
    {
        do {
            return try EtcdConfiguration.resolve(
                endpoints: etcdEndpoints, prefix: etcdPrefix, certificateAuthority: etcdCertificateAuthority,
                certificate: etcdCertificate, privateKey: etcdKey, userName: etcdUser, passwordFile: etcdPasswordFile,
                processEnvironment: processEnvironment)
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
