#if Fleet
    import Environments
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import TestSupport
    import Testing

    /// The fleet against etcd as production runs it: TLS with client certificates (made with
    /// openssl here) and etcd's users, on a real cluster; and how the options are resolved.
    @Suite(
        "etcd TLS and users", .serialized,
        .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"),
        .blocking)
    struct FleetSecurityTests {
        /// A CA, the members' certificate for `localhost`, and a client certificate, in `directory`.
        struct Certificates {
            let ca: TestCertificates
            let member: (certificate: String, key: String)
            let client: (certificate: String, key: String)

            init(in directory: URL, memberExpired: Bool = false) throws {
                ca = try TestCertificates(directory: directory)
                member = try ca.issue("member", names: ["DNS:localhost"], expired: memberExpired)
                // No CN, as the JSON gateway of etcd 3.4 wanted once users were on (the gRPC API
                // takes either: the test below presents one with a CN).
                client = try ca.issue("client", names: [], commonName: false)
            }

            var clientFiles: EtcdConfiguration.TLSFiles {
                .init(certificateAuthority: ca.authority, certificate: client.certificate, privateKey: client.key)
            }

            var tls: EtcdCluster.TLS {
                .init(
                    certificate: member.certificate, key: member.key, clientAuthority: ca.authority, client: clientFiles
                )
            }
        }

        static func temporaryDirectory() throws -> URL {
            let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "etcd-tls-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }

        /// The error `body` throws, as text.
        static func failure(_ body: () async throws -> Void) async -> String {
            do {
                try await body()
                return "no error"
            } catch {
                return "\(error)"
            }
        }

        @Test("a watch refused for a token etcd no longer knows: the next one authenticates again")
        func aWatchAfterTheTokenExpiredAuthenticatesAgain() async throws {
            let cluster = try await EtcdCluster(size: 1)
            try await onThread {
                try cluster.enableAuthentication(rootPassword: "root-secret-1")
                try cluster.addUser("fleet", password: "fleet-secret-2", prefix: "/fleet/")
            }
            let client = try EtcdClient(
                configuration: EtcdConfiguration(
                    endpoints: cluster.endpoints, prefix: "/fleet/", userName: "fleet", password: "fleet-secret-2"))
            // A token, asked for and kept by the client, that etcd forgets, as it does when the
            // token's TTL passes or the member restarts. (Not by waiting out a short TTL: on a busy
            // machine the new token could expire too before the next watch presents it.)
            let revision = try await client.range(prefix: "/fleet/").revision
            try await onThread { try cluster.forgetTokens() }

            // The watch presents the kept token; etcd cancels it. (Each watch is given 20 s, so
            // that a watch that goes on instead fails the test rather than hanging it.)
            let refused = await Self.failure {
                _ = try await Self.firstUpdate(of: client.watch(prefix: "/fleet/", from: revision + 1))
            }
            #expect(refused.contains("invalid auth token"), "\(refused)")
            // The next watch on the same endpoint asks for a new token, and is created.
            let next = await Self.failure {
                let update = try await Self.firstUpdate(of: client.watch(prefix: "/fleet/", from: revision + 1))
                guard case .created = update else { throw CancellationError() }
            }
            #expect(next == "no error", "\(next)")
            await client.shutdown()
        }

        /// The first update of `watch`, or an error: the watch's, or a timeout after 20 s.
        static func firstUpdate(
            of watch: AsyncThrowingStream<EtcdClient.WatchUpdate, any Error>
        ) async throws -> EtcdClient.WatchUpdate? {
            try await withThrowingTaskGroup(of: EtcdClient.WatchUpdate?.self) { group in
                group.addTask {
                    for try await update in watch { return update }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(20))
                    throw EtcdError(operation: "wait for the watch", message: "no update in 20 s")
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        }

        @Test(
            "TLS with client certificates and a user: envctl publish takes the flags, the daemon applies, tokens renew")
        func tlsAndUser() async throws {
            let secured = try await SecuredCluster()
            defer { secured.stop() }
            let (directory, certificates, cluster, passwordFile) = (
                secured.directory, secured.certificates, secured.cluster, secured.passwordFile
            )
            let host = try FleetHarness(cluster: cluster)
            let document = directory.appendingPathComponent("Environments.plist")
            try FleetHarness.document(common: ["Version": "1"]).write(to: document)

            let options = secured.envctlOptions(prefix: host.prefix)
            let published = try runToEnd(
                BuiltProducts.envctl, ["publish"] + options + [document.path], environment: operatorEnvironment())
            #expect(published.status == 0, "\(published.output)")
            #expect(published.output.contains("published \(host.prefix)Environments.plist"))
            #expect(!published.output.contains("fleet-secret-2"))

            // The same through the variables, as a unit's Environment= lines set them: a host with
            // no files of its own reads the fleet's value.
            let emptyHost = directory.appendingPathComponent("empty-host")
            try FileManager.default.createDirectory(at: emptyHost, withIntermediateDirectories: true)
            let shown = try runToEnd(
                BuiltProducts.envctl,
                ["get", "--config-dir", emptyHost.path, "--environment", "Production", "Version"],
                environment: operatorEnvironment([
                    "ENVIRONMENTS_ETCD_ENDPOINTS": cluster.endpoints.joined(separator: ","),
                    "ENVIRONMENTS_ETCD_PREFIX": host.prefix, "ENVIRONMENTS_ETCD_CACERT": certificates.ca.authority,
                    "ENVIRONMENTS_ETCD_CERT": certificates.client.certificate,
                    "ENVIRONMENTS_ETCD_KEY": certificates.client.key, "ENVIRONMENTS_ETCD_USER": "fleet",
                    "ENVIRONMENTS_ETCD_PASSWORD_FILE": passwordFile,
                ]))
            #expect(shown.status == 0, "\(shown.output)")
            #expect(shown.standardOutput == "1\n", "\(shown.output)")

            try await host.start { configuration in
                configuration.tls = certificates.clientFiles
                configuration.userName = "fleet"
                configuration.password = "fleet-secret-2"
            }
            #expect((try? host.environment?.require("Version", as: String.self)) == "1")

            // Outside the user's prefix: refused, with a hint about the role.
            let client = try EtcdClient(
                configuration: EtcdConfiguration(
                    endpoints: cluster.endpoints, prefix: "/fleet/", userName: "fleet", password: "fleet-secret-2",
                    tls: certificates.clientFiles))
            let outside = await Self.failure { _ = try await client.range(prefix: "/elsewhere/") }
            #expect(outside.contains("permission denied"), "\(outside)")
            // A token etcd forgot (as when its TTL passes): the client authenticates again.
            _ = try await client.range(prefix: host.prefix)
            try await onThread { try cluster.forgetTokens() }
            _ = try await client.range(prefix: host.prefix)
            await client.shutdown()

            // The whole cluster restarts: tokens are gone; the watch resumes with a new one.
            cluster.killAll()
            try await cluster.restartAll()
            try await host.publish(common: ["Version": "2"])
            #expect(await host.waitFor("Version", "2", timeout: .seconds(30)), "\(cluster.log)")
            await host.stop()

            // A client certificate with a CN (etcd 3.4's JSON gateway refused it once users were
            // on): over gRPC, etcd takes the user's token before the certificate's name.
            let named = try certificates.ca.issue("named-client", names: [])
            let withName = await Self.failure {
                let client = try EtcdClient(
                    configuration: EtcdConfiguration(
                        endpoints: cluster.endpoints, prefix: "/fleet/", userName: "fleet", password: "fleet-secret-2",
                        tls: .init(
                            certificateAuthority: certificates.ca.authority, certificate: named.certificate,
                            privateKey: named.key)))
                defer { Task { await client.shutdown() } }
                _ = try await client.range(prefix: host.prefix)
            }
            #expect(withName == "no error", "\(withName)")

            // A wrong password: a clear error that names the user, never the password.
            try "not-the-password\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
            let refused = try runToEnd(
                BuiltProducts.envctl, ["publish"] + options + [document.path], environment: operatorEnvironment())
            #expect(refused.status != 0)
            #expect(refused.output.contains("authenticate as fleet"), "\(refused.output)")
            #expect(!refused.output.contains("not-the-password"))
        }

        @Test(
            "TLS and a user: a member stopped with SIGSTOP is left, the watch resumes on another with a token of its own"
        )
        func stalledMemberWithTLSAndUser() async throws {
            let secured = try await SecuredCluster()
            defer { secured.stop() }
            let cluster = secured.cluster
            try await FleetHarness.withFleet(on: cluster, publishing: ["Counter": "0"]) { host in
                try await host.start(requestTimeout: .seconds(5), configure: secured.configureHost)
                try await host.publish(common: ["Counter": "1"])
                #expect(await host.waitFor("Counter", "1"))
                let (inUse, victim, writer) = try host.memberInUse()
                cluster.pause(victim)
                defer { cluster.resume(victim) }
                for counter in 2...6 {
                    try await host.publish(common: ["Counter": "\(counter)"], through: writer)
                }
                #expect(await host.waitFor("Counter", "6", timeout: .seconds(60)), "\(cluster.log)")
                #expect(host.fleet?.client.currentEndpoint != inUse)
                cluster.resume(victim)
                await writer.shutdown()
            }
        }

        @Test(
            "a wrong CA, a name that does not match, no client certificate: errors that name the endpoint; the daemon starts from its cache"
        )
        func tlsFailures() async throws {
            let directory = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let certificates = try Certificates(in: directory.appendingPathComponent("good"))
            let cluster = try await EtcdCluster(size: 1, tls: certificates.tls)
            let host = try FleetHarness(cluster: cluster)
            try await host.publish(common: ["Version": "1"])
            try await host.start { $0.tls = certificates.clientFiles }
            await host.stop()

            let other = try TestCertificates(directory: directory.appendingPathComponent("other"), name: "other")
            let endpoint = cluster.endpoints[0]
            func read(_ endpoints: [String], _ files: EtcdConfiguration.TLSFiles) async -> String {
                await Self.failure {
                    let client = try EtcdClient(
                        configuration: EtcdConfiguration(endpoints: endpoints, prefix: "/", tls: files))
                    defer { Task { await client.shutdown() } }
                    _ = try await client.range(prefix: "/")
                }
            }
            var wrongAuthority = certificates.clientFiles
            wrongAuthority.certificateAuthority = other.authority
            let unverified = await read([endpoint], wrongAuthority)
            #expect(unverified.contains(endpoint), "\(unverified)")
            #expect(unverified.contains("cannot be verified with the CA bundle (--etcd-cacert)"), "\(unverified)")
            #expect(unverified.contains("openssl s_client -connect localhost:"), "\(unverified)")

            let byAddress = "https://127.0.0.1:\(cluster.members[0].clientPort)"
            let mismatch = await read([byAddress], certificates.clientFiles)
            #expect(mismatch.contains("does not name the host of \(byAddress)"), "\(mismatch)")

            let anonymous = await read(
                [endpoint], EtcdConfiguration.TLSFiles(certificateAuthority: certificates.ca.authority))
            #expect(anonymous.contains(endpoint), "\(anonymous)")
            #expect(anonymous.contains("it may require a client certificate, and none was given"), "\(anonymous)")

            // The daemon with the wrong CA: it cannot read etcd, and starts from its cache.
            try await host.start { $0.tls = wrongAuthority }
            #expect(host.fleet?.startedFromCache == true)
            #expect((try? host.environment?.require("Version", as: String.self)) == "1")
            await host.stop()

            // An expired client certificate is refused before anything is sent, naming the file.
            let expired = try certificates.ca.issue("expired-client", names: [], expired: true)
            var expiredFiles = certificates.clientFiles
            expiredFiles.certificate = expired.certificate
            expiredFiles.privateKey = expired.key
            let outdated = await read([endpoint], expiredFiles)
            #expect(outdated.contains("the client certificate \(expired.certificate) expired on"), "\(outdated)")
        }

        @Test("a member whose certificate expired: an error that names the endpoint")
        func expiredMember() async throws {
            let directory = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let certificates = try Certificates(in: directory, memberExpired: true)
            let cluster = try await EtcdCluster(size: 1, tls: certificates.tls, waitsUntilAnswering: false)
            let failure = await Self.failure {
                let client = try EtcdClient(
                    configuration: EtcdConfiguration(
                        endpoints: cluster.endpoints, prefix: "/", tls: certificates.clientFiles))
                defer { Task { await client.shutdown() } }
                _ = try await client.range(prefix: "/")
            }
            #expect(failure.contains(cluster.endpoints[0]), "\(failure)")
            #expect(failure.contains("expired"), "\(failure)")
        }

        @Test("options win over variables, variables over credentials; a user needs a password file; TLS needs https")
        func resolving() throws {
            let credentials = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: credentials) }
            for (name, text) in [
                ("etcd-user", "from-credential\n"), ("etcd-password", "credential-password\n"), ("etcd-ca.pem", ""),
                ("etcd-client.pem", ""), ("etcd-client.key", ""), ("password-file", "file-password\n"),
            ] {
                try text.write(
                    toFile: credentials.appendingPathComponent(name).path, atomically: true, encoding: .utf8)
            }
            let base = ["CREDENTIALS_DIRECTORY": credentials.path]
            func path(_ name: String) -> String { credentials.appendingPathComponent(name).path }

            let fromCredentials = try #require(
                try EtcdConfiguration.resolve(
                    endpoints: "https://etcd-1.cluster.example:2379", prefix: "/fleet/app/", processEnvironment: base))
            #expect(fromCredentials.userName == "from-credential")
            #expect(fromCredentials.password == "credential-password")
            #expect(fromCredentials.tls?.certificateAuthority == path("etcd-ca.pem"))
            #expect(fromCredentials.tls?.privateKey == path("etcd-client.key"))

            let variables = base.merging([
                "ENVIRONMENTS_ETCD_USER": "from-variable", "ENVIRONMENTS_ETCD_PASSWORD_FILE": path("password-file"),
                "ENVIRONMENTS_ETCD_CACERT": "/variable/ca.pem",
            ]) { $1 }
            let fromVariables = try #require(
                try EtcdConfiguration.resolve(
                    endpoints: "https://etcd-1.cluster.example:2379", prefix: "/fleet/app/",
                    processEnvironment: variables))
            #expect(fromVariables.userName == "from-variable")
            #expect(fromVariables.password == "file-password")
            #expect(fromVariables.tls?.certificateAuthority == "/variable/ca.pem")

            let fromOptions = try #require(
                try EtcdConfiguration.resolve(
                    endpoints: "https://etcd-1.cluster.example:2379", prefix: "/fleet/app/",
                    certificateAuthority: "/option/ca.pem", userName: "from-option", processEnvironment: variables))
            #expect(fromOptions.userName == "from-option")
            #expect(fromOptions.tls?.certificateAuthority == "/option/ca.pem")

            // Refused, each with a word why: a user without a password, TLS files for an http://
            // endpoint, a certificate without its key.
            let refused: [(says: String, resolve: () throws -> EtcdConfiguration?)] = [
                (
                    "is given without a password",
                    {
                        try EtcdConfiguration.resolve(
                            endpoints: "https://etcd-1.cluster.example:2379", prefix: "/p/", userName: "someone",
                            processEnvironment: [:])
                    }
                ),
                (
                    "is plain http://",
                    {
                        try EtcdConfiguration.resolve(
                            endpoints: "http://etcd-1.cluster.example:2379", prefix: "/p/",
                            certificateAuthority: "/ca.pem", processEnvironment: [:])
                    }
                ),
                (
                    "without its key",
                    {
                        try EtcdConfiguration.resolve(
                            endpoints: "https://etcd-1.cluster.example:2379", prefix: "/p/", certificate: "/client.pem",
                            processEnvironment: [:])
                    }
                ),
            ]
            for refusal in refused {
                let error = #expect(throws: EtcdError.self) { try refusal.resolve() }
                #expect(error?.message.contains(refusal.says) == true, "\(String(describing: error))")
            }
        }
    }
#endif
