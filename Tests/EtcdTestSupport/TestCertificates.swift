#if Fleet
    package import Foundation

    /// A certificate authority and the certificates it signs, made with `openssl` in a directory
    /// (P-256 keys): for etcd members that speak TLS and clients that present a certificate.
    package struct TestCertificates: Sendable {
        /// The directory that holds the files.
        package let directory: URL
        /// The authority's name, for its files: `NAME-ca.pem`, `NAME-ca.key`.
        package let name: String

        /// The authority's certificate (PEM).
        package var authority: String { path("\(name)-ca.pem") }

        /// Makes a new authority, valid for a day.
        package init(directory: URL, name: String = "test") throws {
            self.directory = directory
            self.name = name
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Self.openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=\(name) test CA", "-keyout", path("\(name)-ca.key"), "-out", authority,
            ])
        }

        /// A certificate and its key signed by this authority: `(certificate, key)` paths.
        ///
        /// - Parameters:
        ///   - file: The files' name: `FILE.pem` and `FILE.key`.
        ///   - names: Its subjectAltName entries, such as `DNS:localhost` or `IP:127.0.0.1`.
        ///   - expired: Valid until yesterday.
        ///   - commonName: Whether its subject has a CN (`CN=FILE`), else only `O=FILE` (with
        ///     authentication on, etcd 3.4's JSON gateway refused a client certificate with a CN;
        ///     its gRPC API takes the user's token first).
        package func issue(_ file: String, names: [String], expired: Bool = false, commonName: Bool = true) throws -> (
            certificate: String, key: String
        ) {
            let (certificate, key, request) = (path("\(file).pem"), path("\(file).key"), path("\(file).csr"))
            let extensions = path("\(file).ext")
            var text = "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n"
            if !names.isEmpty { text += "subjectAltName=\(names.joined(separator: ","))\n" }
            try text.write(toFile: extensions, atomically: true, encoding: .utf8)
            try Self.openssl([
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
                commonName ? "/CN=\(file)" : "/O=\(file)",
                "-keyout", key, "-out", request,
            ])
            try Self.openssl([
                "x509", "-req", "-in", request, "-CA", authority, "-CAkey", path("\(name)-ca.key"), "-CAcreateserial",
                "-days", expired ? "-1" : "1", "-extfile", extensions, "-out", certificate,
            ])
            return (certificate, key)
        }

        private func path(_ file: String) -> String { directory.appendingPathComponent(file).path }

        private static func openssl(_ arguments: [String]) throws {
            let (status, text) = try runTool("/usr/bin/openssl", arguments)
            guard status == 0 else {
                throw CocoaError(
                    .executableLoad,
                    userInfo: [NSDebugDescriptionErrorKey: "openssl \(arguments.joined(separator: " ")): \(text)"])
            }
        }
    }
#endif
