#if Fleet
    import GRPCNIOTransportHTTP2Posix
    import NIOSSL

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// TLS to the members: the files loaded and checked once, and TLS failures in words.
    extension EtcdClient {
        /// The TLS configuration of `files`, each loaded now: a file that is missing, not PEM, or a
        /// client certificate that expired is an error at once, naming the file.
        static func tlsConfiguration(_ files: EtcdConfiguration.TLSFiles) throws(EtcdError)
            -> HTTP2ClientTransport.Posix.TransportSecurity.TLS
        {
            var tls = HTTP2ClientTransport.Posix.TransportSecurity.TLS.defaults
            func load<Value>(_ what: String, _ path: String, _ body: () throws -> Value) throws(EtcdError) -> Value {
                do {
                    return try body()
                } catch {
                    throw EtcdError(
                        operation: "load TLS files", message: "cannot load the \(what) \(path): \(error)",
                        hint:
                            "check --etcd-cacert, --etcd-cert and --etcd-key (or their variables and credentials): PEM files this user may read"
                    )
                }
            }
            func bytes(_ path: String) throws -> [UInt8] { try FleetFiles.bytes(path) }
            if let authority = files.certificateAuthority {
                let pem = try load("CA bundle", authority) { try bytes(authority) }
                let certificates = try load("CA bundle", authority) { try NIOSSLCertificate.fromPEMBytes(pem) }
                guard !certificates.isEmpty else {
                    throw EtcdError(
                        operation: "load TLS files", message: "the CA bundle \(authority) holds no certificate",
                        hint: "name the PEM file of the CA that signed the members' certificates (--etcd-cacert)")
                }
                tls.trustRoots = .certificates([.bytes(pem, format: .pem)])
            }
            if let path = files.certificate {
                let pem = try load("client certificate", path) { try bytes(path) }
                let chain = try load("client certificate", path) { try NIOSSLCertificate.fromPEMBytes(pem) }
                if let leaf = chain.first {
                    let expiry = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
                    guard expiry > Date() else {
                        throw EtcdError(
                            operation: "load TLS files",
                            message: "the client certificate \(path) expired on \(expiry.formatted(.iso8601))",
                            hint: "renew it (openssl x509 -in \(path) -noout -dates shows its dates)")
                    }
                }
                tls.certificateChain = [.bytes(pem, format: .pem)]
            }
            if let path = files.privateKey {
                let pem = try load("client key", path) { try bytes(path) }
                _ = try load("client key", path) { try NIOSSLPrivateKey(bytes: pem, format: .pem) }
                tls.privateKey = .bytes(pem, format: .pem)
            }
            return tls
        }

        /// What a TLS failure means, in words, and what to check; `nil` for another error.
        ///
        /// - Parameter text: The failure with its causes, as text.
        static func explainTLSFailure(_ text: String, endpoint: String, presentsCertificate: Bool)
            -> (message: String, hint: String)?
        {
            let authority = "the CA bundle (--etcd-cacert)"
            let host = URL(string: endpoint).map { "\($0.host ?? "HOST"):\($0.port ?? 2379)" } ?? "HOST:PORT"
            let check =
                "openssl s_client -connect \(host) -CAfile CA.pem shows the member's certificate and why it fails"
            if text.contains("failedToValidateHostname") {
                return (
                    "TLS: the member's certificate does not name the host of \(endpoint) (\(text))",
                    "use the name the certificate lists in its subjectAltName, or reissue it with this one; \(check)"
                )
            }
            if text.contains("CERTIFICATE_VERIFY_FAILED") {
                return (
                    "TLS: the member's certificate cannot be verified with \(authority): signed by another CA, expired or not yet valid (\(text))",
                    check
                )
            }
            let refused =
                text.contains("ALERT_BAD_CERTIFICATE") || text.contains("ALERT_UNKNOWN_CA")
                || text.contains("ALERT_CERTIFICATE_REQUIRED") || text.contains("ALERT_CERTIFICATE_EXPIRED")
            if refused, endpoint.hasPrefix("https://"), !presentsCertificate {
                return (
                    "TLS: the member refused the connection: it may require a client certificate, and none was given (\(text))",
                    "etcd's --client-cert-auth wants a client certificate (--etcd-cert, --etcd-key) signed by its --trusted-ca-file"
                )
            }
            if refused {
                return (
                    "TLS: the member refused this client's certificate (\(text))",
                    "etcd's --client-cert-auth wants a client certificate (--etcd-cert, --etcd-key) signed by its --trusted-ca-file"
                )
            }
            if endpoint.hasPrefix("https://"), !presentsCertificate,
                text.contains("remoteConnectionClosed") || text.contains("uncleanShutdown")
                    || text.contains("closed")
            {
                // TLS 1.3: the member checks the client's certificate after the handshake, and closes.
                return (
                    "the member closed the connection: it may require a client certificate, and none was given (\(text))",
                    "etcd's --client-cert-auth wants a client certificate (--etcd-cert, --etcd-key) signed by its --trusted-ca-file"
                )
            }
            if text.contains("WRONG_VERSION_NUMBER") {
                return (
                    "TLS: \(endpoint) does not speak TLS (\(text))", "use its http:// URL, or enable TLS on the member"
                )
            }
            return nil
        }
    }
#endif
