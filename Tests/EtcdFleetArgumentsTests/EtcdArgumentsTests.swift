#if Fleet
    import ArgumentParser
    import EtcdFleetArguments
    import EtcdFleetClient
    import Foundation
    import Testing

    /// The etcd options every fleet program takes, parsed as a command line is: each option, its
    /// variable and its credential, in that order; errors that say what to pass.
    @Suite("etcd command-line options")
    struct EtcdArgumentsTests {
        /// A directory of files for credentials and TLS paths, removed by the caller.
        private static func directory(_ files: [String: String]) throws -> URL {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "etcd-arguments-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            for (name, text) in files {
                try Data(text.utf8).write(to: url.appendingPathComponent(name))
            }
            return url
        }

        /// A plain-http endpoint and a prefix.
        static let plain = ["--etcd-endpoints", "http://127.0.0.1:2379", "--etcd-prefix", "/p/"]

        @Test("no endpoints, neither option nor variable: no fleet, whatever else is given")
        func noEndpoints() throws {
            let arguments = try EtcdArguments.parse(["--etcd-prefix", "/fleet/app/", "--etcd-user", "reader"])
            #expect(try arguments.configuration(processEnvironment: [:]) == nil)
        }

        @Test("options win over variables; lists are split on commas and trimmed")
        func optionsOverVariables() throws {
            let arguments = try EtcdArguments.parse([
                "--etcd-endpoints", "http://127.0.0.1:2379, http://127.0.0.1:22379,", "--etcd-prefix", "/fleet/a/",
            ])
            let configuration = try #require(
                try arguments.configuration(processEnvironment: [
                    EtcdConfiguration.endpointsVariable: "http://127.0.0.1:32379",
                    EtcdConfiguration.prefixVariable: "/fleet/b/",
                ]))
            #expect(configuration.endpoints == ["http://127.0.0.1:2379", "http://127.0.0.1:22379"])
            #expect(configuration.prefix == "/fleet/a/")
            #expect(configuration.userName == nil && configuration.password == nil && configuration.tls == nil)
        }

        @Test("variables stand in for absent options")
        func variables() throws {
            let files = try Self.directory(["password": "s3cret\n"])
            defer { try? FileManager.default.removeItem(at: files) }
            let configuration = try #require(
                try EtcdArguments.parse([]).configuration(processEnvironment: [
                    EtcdConfiguration.endpointsVariable: "http://127.0.0.1:2379",
                    EtcdConfiguration.prefixVariable: "/fleet/app/",
                    EtcdConfiguration.userVariable: "reader",
                    EtcdConfiguration.passwordFileVariable: files.appendingPathComponent("password").path,
                ]))
            #expect(configuration.userName == "reader")
            #expect(configuration.password == "s3cret", "read from the file, its final newline dropped")
        }

        @Test("credentials stand in for absent options and variables: user, password, TLS files")
        func credentials() throws {
            let credentials = try Self.directory([
                "etcd-user": "fleet-reader\n", "etcd-password": "from-credential\n", "etcd-ca.pem": "CA",
                "etcd-client.pem": "CERT", "etcd-client.key": "KEY",
            ])
            defer { try? FileManager.default.removeItem(at: credentials) }
            let arguments = try EtcdArguments.parse([
                "--etcd-endpoints", "https://etcd-1.cluster.example:2379", "--etcd-prefix", "/fleet/app/",
            ])
            let configuration = try #require(
                try arguments.configuration(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials.path]))
            #expect(configuration.userName == "fleet-reader")
            #expect(configuration.password == "from-credential")
            #expect(configuration.tls?.certificateAuthority == credentials.appendingPathComponent("etcd-ca.pem").path)
            #expect(configuration.tls?.certificate == credentials.appendingPathComponent("etcd-client.pem").path)
            #expect(configuration.tls?.privateKey == credentials.appendingPathComponent("etcd-client.key").path)
            // An option still wins over the credential.
            let named = try EtcdArguments.parse([
                "--etcd-endpoints", "https://etcd-1.cluster.example:2379", "--etcd-prefix", "/fleet/app/",
                "--etcd-user", "operator", "--etcd-password-file",
                credentials.appendingPathComponent("etcd-password").path,
            ])
            #expect(
                try named.configuration(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials.path])?.userName
                    == "operator")
        }

        @Test(
            "a configuration that cannot work is refused with what to pass",
            arguments: [
                (["--etcd-endpoints", "127.0.0.1:2379", "--etcd-prefix", "/p/"], "not an http:// or https:// URL"),
                (["--etcd-endpoints", "http://127.0.0.1:2379"], "--etcd-prefix"),
                (Self.plain + ["--etcd-user", "u"], "--etcd-password-file"),
                (
                    ["--etcd-endpoints", "https://127.0.0.1:2379", "--etcd-prefix", "/p/", "--etcd-cert", "c"],
                    "--etcd-key"
                ),
                (Self.plain + ["--etcd-cacert", "ca.pem"], "https://"),
            ])
        func refused(command: [String], hint: String) throws {
            let arguments = try EtcdArguments.parse(command)
            let error = #expect(throws: EtcdError.self) { _ = try arguments.configuration(processEnvironment: [:]) }
            #expect("\(error.map { "\($0)" } ?? "")".contains(hint), "\(String(describing: error)) names \(hint)")
        }

        @Test("a password file that cannot be read is named, and the password is never an option")
        func passwordFile() throws {
            let arguments = try EtcdArguments.parse([
                "--etcd-endpoints", "http://127.0.0.1:2379", "--etcd-prefix", "/p/", "--etcd-user", "u",
                "--etcd-password-file", "/nonexistent/password",
            ])
            let error = #expect(throws: EtcdError.self) { _ = try arguments.configuration(processEnvironment: [:]) }
            #expect("\(error.map { "\($0)" } ?? "")".contains("/nonexistent/password"))
            #expect(throws: (any Error).self) { _ = try EtcdArguments.parse(["--etcd-password", "s3cret"]) }
            #expect(EtcdArguments.helpMessage().contains("never the password itself"))
        }
    }
#endif
