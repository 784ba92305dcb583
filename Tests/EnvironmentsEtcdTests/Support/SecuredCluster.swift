#if Fleet
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import TestSupport

    /// An etcd cluster as production runs one: TLS with client certificates, authentication on
    /// (root's password `root-secret-1`) and, unless told otherwise, the user `fleet` with readwrite
    /// on `/fleet/` (password `fleet-secret-2`, also in ``passwordFile``). Its files live in a
    /// temporary directory that ``stop()`` removes.
    struct SecuredCluster {
        let directory: URL
        let certificates: FleetSecurityTests.Certificates
        let cluster: EtcdCluster
        /// A file with the user's password, for `--etcd-password-file`.
        let passwordFile: String

        /// The certificates (openssl) and the users (etcdctl, with etcd's bcrypt behind it) are made
        /// by child processes that take seconds on a loaded machine: on threads of their own, so that
        /// they never hold the few threads that run every other suite's daemons in this process.
        init(size: Int = 3, fleetUser: Bool = true) async throws {
            let directory = try FleetSecurityTests.temporaryDirectory()
            self.directory = directory
            certificates = try await onThread { try FleetSecurityTests.Certificates(in: directory) }
            let cluster = try await EtcdCluster(size: size, tls: certificates.tls)
            self.cluster = cluster
            try await onThread {
                try cluster.enableAuthentication(rootPassword: "root-secret-1")
                if fleetUser { try cluster.addUser("fleet", password: "fleet-secret-2", prefix: "/fleet/") }
            }
            passwordFile = directory.appendingPathComponent("password").path
            try "fleet-secret-2\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        }

        /// envctl's options for the fleet under `prefix`, as the user `fleet`.
        func envctlOptions(prefix: String) -> [String] {
            ["--etcd-endpoints", cluster.endpoints.joined(separator: ","), "--etcd-prefix", prefix] + credentialOptions
        }

        /// envctl's TLS and user options alone.
        var credentialOptions: [String] {
            [
                "--etcd-cacert", certificates.ca.authority, "--etcd-cert", certificates.client.certificate,
                "--etcd-key", certificates.client.key, "--etcd-user", "fleet", "--etcd-password-file", passwordFile,
            ]
        }

        /// The same as a daemon's variables, as a unit's `Environment=` lines set them.
        var daemonEnvironment: [String: String] {
            [
                "ENVIRONMENTS_ETCD_CACERT": certificates.ca.authority,
                "ENVIRONMENTS_ETCD_CERT": certificates.client.certificate,
                "ENVIRONMENTS_ETCD_KEY": certificates.client.key, "ENVIRONMENTS_ETCD_USER": "fleet",
                "ENVIRONMENTS_ETCD_PASSWORD_FILE": passwordFile,
            ]
        }

        /// Makes a host's configuration reach the cluster as the user `fleet`.
        func configureHost(_ configuration: inout EtcdConfiguration) {
            configuration.tls = certificates.clientFiles
            configuration.userName = "fleet"
            configuration.password = "fleet-secret-2"
        }

        func stop() {
            cluster.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }
#endif
