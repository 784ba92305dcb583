#if Fleet
    package import ArgumentParser
    package import EtcdFleetClient

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// The command-line options that say where a fleet's configuration lives in etcd and how to
    /// reach it, declared once for every program that takes them (envctl, example-fleet-daemon):
    /// `--etcd-endpoints`, `--etcd-prefix`, TLS (`--etcd-cacert`, `--etcd-cert`, `--etcd-key`) and
    /// a user (`--etcd-user`, `--etcd-password-file`). Each falls back to its
    /// `$ENVIRONMENTS_ETCD_*` variable, then to a credential, as `EtcdConfiguration.resolve` says.
    package struct EtcdArguments: ParsableArguments {
        @Option(
            name: .customLong("etcd-endpoints"),
            help:
                "The etcd members that hold the fleet's configuration, applied below this host's files (URL[,URL...]; default: $ENVIRONMENTS_ETCD_ENDPOINTS)."
        )
        package var endpoints: String?

        @Option(
            name: .customLong("etcd-prefix"),
            help: "The fleet's key prefix in etcd (default: $ENVIRONMENTS_ETCD_PREFIX), e.g. /fleet/example-daemon/.")
        package var prefix: String?

        @Option(
            name: .customLong("etcd-cacert"),
            help: "The CA bundle (PEM) that signed the etcd members' certificates (default: $ENVIRONMENTS_ETCD_CACERT)."
        )
        package var certificateAuthority: String?

        @Option(
            name: .customLong("etcd-cert"),
            help:
                "This client's TLS certificate (PEM) for etcd's --client-cert-auth (default: $ENVIRONMENTS_ETCD_CERT).")
        package var certificate: String?

        @Option(
            name: .customLong("etcd-key"),
            help:
                "The private key (PEM) of --etcd-cert (default: $ENVIRONMENTS_ETCD_KEY, else the credential etcd-client.key)."
        )
        package var privateKey: String?

        @Option(
            name: .customLong("etcd-user"),
            help: "The etcd user to authenticate as (default: $ENVIRONMENTS_ETCD_USER, else the credential etcd-user).")
        package var userName: String?

        @Option(
            name: .customLong("etcd-password-file"),
            help:
                "The file that holds the etcd user's password (default: $ENVIRONMENTS_ETCD_PASSWORD_FILE, else the credential etcd-password); never the password itself."
        )
        package var passwordFile: String?

        package init() {}

        /// The etcd configuration these options and the environment give, or `nil` without
        /// endpoints (neither `--etcd-endpoints` nor `$ENVIRONMENTS_ETCD_ENDPOINTS`).
        package func configuration(processEnvironment: [String: String] = ProcessInfo.processInfo.environment)
            throws(EtcdError) -> EtcdConfiguration?
        {
            try EtcdConfiguration.resolve(
                endpoints: endpoints, prefix: prefix, certificateAuthority: certificateAuthority,
                certificate: certificate, privateKey: privateKey, userName: userName, passwordFile: passwordFile,
                processEnvironment: processEnvironment)
        }
    }
#endif
