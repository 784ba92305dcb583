#if Fleet
    import Environments

    #if canImport(FoundationEssentials)
        public import FoundationEssentials
    #else
        public import Foundation
    #endif

    /// Where a fleet configuration lives in etcd, and how to reach it.
    ///
    /// Secrets never come from the command line: the user name and password, and the TLS client
    /// certificate and key, are read from files, normally systemd credentials
    /// (`LoadCredential=etcd-password:/etc/credstore/...`) in `$CREDENTIALS_DIRECTORY`.
    public struct EtcdConfiguration: Sendable, Hashable {
        /// The members' client URLs (`http://host:2379` or `https://...`), tried in order; when
        /// the one in use fails, the next one takes over.
        package var endpoints: [String]
        /// The key prefix the fleet's documents live under, with a trailing `/`
        /// (`/fleet/example-daemon/`): `PREFIX/Environments.plist` and
        /// `PREFIX/Environments.plist.d/NAME.plist`.
        package var prefix: String
        /// The etcd user, for etcd's authentication; `nil` when it is off.
        package var userName: String?
        /// The etcd user's password.
        package var password: String?
        /// A TLS client identity and the authority that signed the members' certificates.
        package var tls: TLSFiles?
        /// Where the last good fleet configuration is cached on local disk (a daemon that starts
        /// while etcd is unreachable starts from it); `nil` for no cache.
        package var cacheDirectory: String?
        /// How long one request may take (5 s by default), and how long a watch may hear nothing
        /// from its member. Watches ask for etcd's progress notifications: with the members'
        /// `--experimental-watch-progress-notify-interval` below half of it, an idle watch hears
        /// one in time and the client sends nothing; a watch that hears nothing for half of it asks
        /// its member for one (a progress request on the watch's stream, no read), and when nothing
        /// comes by the end of it the next endpoint takes over: a stalled member is left within
        /// it. Every 6 of it (30 s by default) a watch looks at its member's status, and leaves a
        /// member cut off from its cluster's leader.
        public var requestTimeout: Duration
        /// What the fleet's documents may hold; from `$ENVIRONMENTS_ETCD_MAX_DOCUMENTS`,
        /// `$ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES` and `$ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES` with
        /// ``resolve(endpoints:prefix:processEnvironment:)``.
        package var limits = FleetLimits()
        /// How a daemon reports its status under `PREFIX/.status/HOST` (on by default); from
        /// `$ENVIRONMENTS_ETCD_STATUS`, `$ENVIRONMENTS_ETCD_HOST_ID` and
        /// `$ENVIRONMENTS_ETCD_STATUS_TTL` with ``resolve(endpoints:prefix:certificateAuthority:certificate:privateKey:userName:passwordFile:processEnvironment:)``.
        package var status = FleetStatusOptions()

        /// PEM files for TLS to etcd.
        public struct TLSFiles: Sendable, Hashable {
            /// The certificate authority that signed the members' certificates; `nil` for the
            /// system's trust store.
            package var certificateAuthority: String?
            /// The client certificate chain, for etcd's `--client-cert-auth`.
            package var certificate: String?
            /// The client certificate's private key.
            package var privateKey: String?

            /// TLS files, each optional.
            public init(certificateAuthority: String? = nil, certificate: String? = nil, privateKey: String? = nil) {
                self.certificateAuthority = certificateAuthority
                self.certificate = certificate
                self.privateKey = privateKey
            }
        }

        /// The variable that lists the endpoints, comma-separated: `ENVIRONMENTS_ETCD_ENDPOINTS`.
        package static let endpointsVariable = "ENVIRONMENTS_ETCD_ENDPOINTS"
        /// The variable that holds the prefix: `ENVIRONMENTS_ETCD_PREFIX`.
        package static let prefixVariable = "ENVIRONMENTS_ETCD_PREFIX"
        /// The variable that names the CA bundle file (`--etcd-cacert`).
        package static let certificateAuthorityVariable = "ENVIRONMENTS_ETCD_CACERT"
        /// The variable that names the client certificate file (`--etcd-cert`).
        package static let certificateVariable = "ENVIRONMENTS_ETCD_CERT"
        /// The variable that names the client key file (`--etcd-key`).
        package static let privateKeyVariable = "ENVIRONMENTS_ETCD_KEY"
        /// The variable that holds the etcd user's name (`--etcd-user`).
        package static let userVariable = "ENVIRONMENTS_ETCD_USER"
        /// The variable that names the file with the etcd user's password (`--etcd-password-file`).
        package static let passwordFileVariable = "ENVIRONMENTS_ETCD_PASSWORD_FILE"

        /// A configuration; `endpoints` and `prefix` are normalized (spaces trimmed, one trailing
        /// `/` on the prefix).
        public init(
            endpoints: [String], prefix: String, userName: String? = nil, password: String? = nil, tls: TLSFiles? = nil,
            cacheDirectory: String? = nil, requestTimeout: Duration = .seconds(5)
        ) {
            self.endpoints = endpoints.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
            var prefix = prefix.trimmingWhitespace()
            if !prefix.hasSuffix("/") { prefix += "/" }
            self.prefix = prefix
            self.userName = userName
            self.password = password
            self.tls = tls
            self.cacheDirectory = cacheDirectory
            self.requestTimeout = requestTimeout
        }

        /// The configuration from command-line values (which win), the process environment and
        /// systemd credentials, or `nil` when no endpoints are given (fleet mode off). Each value
        /// is taken from the first of these that has it:
        ///
        /// | what | option | variable | credential in `$CREDENTIALS_DIRECTORY` |
        /// |---|---|---|---|
        /// | endpoints, `URL[,URL...]` | `--etcd-endpoints` | `$ENVIRONMENTS_ETCD_ENDPOINTS` | |
        /// | key prefix | `--etcd-prefix` | `$ENVIRONMENTS_ETCD_PREFIX` | |
        /// | CA bundle (PEM) | `--etcd-cacert` | `$ENVIRONMENTS_ETCD_CACERT` | `etcd-ca.pem` |
        /// | client certificate (PEM) | `--etcd-cert` | `$ENVIRONMENTS_ETCD_CERT` | `etcd-client.pem` |
        /// | client key (PEM) | `--etcd-key` | `$ENVIRONMENTS_ETCD_KEY` | `etcd-client.key` |
        /// | user | `--etcd-user` | `$ENVIRONMENTS_ETCD_USER` | `etcd-user` |
        /// | password file | `--etcd-password-file` | `$ENVIRONMENTS_ETCD_PASSWORD_FILE` | `etcd-password` |
        ///
        /// The password is only ever read from a file. The cache is in `$CACHE_DIRECTORY`
        /// (`CacheDirectory=`), else `$STATE_DIRECTORY`. `$ENVIRONMENTS_ETCD_MAX_DOCUMENTS` (127),
        /// `$ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES` (16 MiB) and `$ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES`
        /// (64 MiB) are the limits on the fleet's documents, in bytes with an optional `K`, `M` or `G`
        /// (powers of 1024). `$ENVIRONMENTS_ETCD_STATUS` (`off` turns status reporting off),
        /// `$ENVIRONMENTS_ETCD_HOST_ID` and `$ENVIRONMENTS_ETCD_STATUS_TTL` (seconds) set ``status``.
        ///
        /// - Throws: ``EtcdError`` when endpoints are given without a prefix, an endpoint is not an
        ///   `http` or `https` URL, TLS files are given for an `http://` endpoint, a user has no
        ///   password, a certificate and its key come one without the other, a limit is not a
        ///   positive number, or a file cannot be read.
        public static func resolve(
            endpoints: String?, prefix: String?, certificateAuthority: String? = nil, certificate: String? = nil,
            privateKey: String? = nil, userName: String? = nil, passwordFile: String? = nil,
            processEnvironment: [String: String] = ProcessInfo.processInfo.environment
        ) throws(EtcdError) -> EtcdConfiguration? {
            guard let list = endpoints ?? processEnvironment[endpointsVariable], !list.isEmpty else { return nil }
            let urls = try endpointURLs(list)
            guard let prefix = prefix ?? processEnvironment[prefixVariable], !prefix.isEmpty else {
                throw EtcdError(
                    operation: "configure", message: "etcd endpoints are given but no key prefix",
                    hint: "pass --etcd-prefix or set $\(prefixVariable), for example /fleet/example-daemon/")
            }
            var configuration = EtcdConfiguration(endpoints: urls, prefix: prefix)
            let sources = SettingSources(processEnvironment: processEnvironment)
            if let (user, password) = try authentication(userName: userName, passwordFile: passwordFile, sources) {
                configuration.userName = user
                configuration.password = password
            }
            let tls = TLSFiles(
                certificateAuthority: sources.value(
                    certificateAuthority, certificateAuthorityVariable, credential: "etcd-ca.pem"),
                certificate: sources.value(certificate, certificateVariable, credential: "etcd-client.pem"),
                privateKey: sources.value(privateKey, privateKeyVariable, credential: "etcd-client.key"))
            if tls != TLSFiles() {
                try check(tls, endpoints: urls)
                configuration.tls = tls
            }
            configuration.limits = try FleetLimits(processEnvironment: processEnvironment)
            configuration.status = try FleetStatusOptions(processEnvironment: processEnvironment)
            configuration.cacheDirectory = [
                processEnvironment["CACHE_DIRECTORY"], processEnvironment["STATE_DIRECTORY"],
            ]
            .compactMap { $0?.split(separator: ":").first.map(String.init) }.first { !$0.isEmpty }
            return configuration
        }

        /// Where a setting that `resolve` reads comes from: the option, else the variable, else a
        /// credential of the unit.
        private struct SettingSources {
            let processEnvironment: [String: String]
            let credentials: String?

            init(processEnvironment: [String: String]) {
                self.processEnvironment = processEnvironment
                credentials = processEnvironment["CREDENTIALS_DIRECTORY"].flatMap { $0.isEmpty ? nil : $0 }
            }

            /// The credential's path, when the unit has it.
            func credential(_ name: String) -> String? {
                guard let credentials else { return nil }
                let path = PathNames.join(credentials, name)
                return FleetFiles.exists(path) ? path : nil
            }

            /// The option's value, else the variable's, else the credential's path.
            func value(_ option: String?, _ variable: String, credential name: String? = nil) -> String? {
                if let option, !option.isEmpty { return option }
                if let text = processEnvironment[variable], !text.isEmpty { return text }
                return name.flatMap(credential)
            }
        }

        /// The comma-separated endpoints of `list`, each an `http` or `https` URL.
        private static func endpointURLs(_ list: String) throws(EtcdError) -> [String] {
            let urls = list.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
            for url in urls where !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
                throw EtcdError(
                    operation: "configure", message: "endpoint '\(url)' is not an http:// or https:// URL",
                    hint:
                        "list the members' client URLs, for example https://etcd-1.cluster.example:2379,https://etcd-2.cluster.example:2379"
                )
            }
            return urls
        }

        /// The user and its password, if a user is given: its name from the option or variable,
        /// else the `etcd-user` credential file; its password from a file, which it must have.
        private static func authentication(userName: String?, passwordFile: String?, _ sources: SettingSources)
            throws(EtcdError) -> (user: String, password: String)?
        {
            var user = sources.value(userName, userVariable)
            if user == nil, let file = sources.credential("etcd-user") { user = try read(file) }
            guard let user else { return nil }
            guard let file = sources.value(passwordFile, passwordFileVariable, credential: "etcd-password") else {
                throw EtcdError(
                    operation: "configure", message: "etcd user '\(user)' is given without a password",
                    hint:
                        "pass --etcd-password-file FILE (or $\(passwordFileVariable)), or give the unit the credential etcd-password (LoadCredential=etcd-password:/etc/credstore/...)"
                )
            }
            return (user, try read(file))
        }

        /// TLS files given need a certificate and its key together, and https:// endpoints only.
        private static func check(_ tls: TLSFiles, endpoints urls: [String]) throws(EtcdError) {
            guard (tls.certificate == nil) == (tls.privateKey == nil) else {
                throw EtcdError(
                    operation: "configure",
                    message: tls.certificate == nil
                        ? "a client key is given without its certificate"
                        : "a client certificate is given without its key",
                    hint: "pass both --etcd-cert and --etcd-key (or neither)")
            }
            if let plain = urls.first(where: { $0.hasPrefix("http://") }) {
                throw EtcdError(
                    operation: "configure", message: "TLS files are given, but endpoint '\(plain)' is plain http://",
                    hint: "use https:// endpoints with --etcd-cacert, --etcd-cert and --etcd-key")
            }
        }

        private static func read(_ path: String) throws(EtcdError) -> String {
            do {
                var text = Substring(try FleetFiles.text(path))
                while text.last?.isNewline == true { text.removeLast() }
                while text.first?.isNewline == true { text.removeFirst() }
                return String(text)
            } catch {
                throw EtcdError(
                    operation: "read credential", message: "cannot read \(path): \(error)",
                    hint: "check the file's path and permissions, or LoadCredential= in the unit")
            }
        }
    }
#endif
