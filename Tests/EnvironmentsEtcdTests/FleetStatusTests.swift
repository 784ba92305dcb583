#if Fleet
    import Environments
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import TestSupport
    import Testing

    /// Hosts that answer back (issue 37.1–2): each daemon keeps `PREFIX/.status/HOST` on a lease,
    /// and `envctl fleet status` reads them; against a real cluster, with real daemons' cores.
    @Suite(
        "fleet status", .serialized, .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"),
        .blocking)
    struct FleetStatusTests {
        /// `envctl fleet status --json` for `prefix`, decoded, with the exit status.
        struct StatusOutput: Decodable {
            struct Host: Decodable {
                struct Last: Decodable {
                    var outcome: String
                    var revision: Int64
                    var error: String?
                }
                var host: String
                var revision: Int64?
                var current: Bool
                var stale: Bool
                var last: Last?
                var library: String?
                var version: String?
                var claimedHost: String?
            }
            var revision: Int64
            var hosts: [Host]
            var behind: Int

            func host(_ name: String) -> Host? { hosts.first { $0.host == name } }
        }

        static func envctlStatus(_ cluster: EtcdCluster, _ prefix: String, json: Bool = true, extra: [String] = [])
            throws -> (status: Int32, text: String, decoded: StatusOutput?)
        {
            let result = try runToEnd(
                BuiltProducts.envctl,
                [
                    "fleet", "status", "--etcd-endpoints", cluster.endpoints.joined(separator: ","), "--etcd-prefix",
                    prefix,
                ]
                    + (json ? ["--json"] : []) + extra,
                environment: operatorEnvironment(), separately: true)
            let decoded =
                json ? try? JSONDecoder().decode(StatusOutput.self, from: Data(result.standardOutput.utf8)) : nil
            return (result.status, result.standardOutput + result.standardError, decoded)
        }

        /// Polls `envctl fleet status --json` until `condition` holds (or 20 s have passed), and
        /// returns the last answer.
        static func waitForStatus(
            _ cluster: EtcdCluster, _ prefix: String, extra: [String] = [], _ condition: (Int32, StatusOutput) -> Bool
        ) async throws -> (status: Int32, text: String, decoded: StatusOutput?) {
            let deadline = ContinuousClock.now + .seconds(20)
            // Off the cooperative pool, where the hosts of these tests renew their status (the
            // suite's `.blocking` trait already ensures that; `onThread` predates the trait).
            let ask = { try await onThread { try envctlStatus(cluster, prefix, extra: extra) } }
            var last = try await ask()
            while ContinuousClock.now < deadline {
                if let decoded = last.decoded, condition(last.status, decoded) { return last }
                try await Task.sleep(for: .milliseconds(200))
                last = try await ask()
            }
            return last
        }

        /// The raw value of `key`, or `nil` when there is none.
        static func value(of key: String, _ cluster: EtcdCluster) async throws -> EtcdKeyValue? {
            let client = try cluster.client()
            defer { Task { await client.shutdown() } }
            return try await client.range(prefix: key).keyValues.first { $0.key == key }
        }

        /// Polls `key` until it is there (`present`) or gone, for `timeout` at the most; says
        /// whether it is so in the end.
        static func waitFor(
            _ key: String, present: Bool, _ cluster: EtcdCluster, timeout: Duration = .seconds(15)
        ) async throws -> Bool {
            let deadline = ContinuousClock.now + timeout
            while try await (value(of: key, cluster) != nil) != present, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
            return try await (value(of: key, cluster) != nil) == present
        }

        /// Runs `body` with one host, `id`, running on a one-member cluster with `Limit = 1`
        /// published, and the key of its status.
        static func withHost(_ id: String, _ body: (FleetHarness, _ statusKey: String) async throws -> Void)
            async throws
        {
            try await FleetHarness.withFleet(size: 1, publishing: ["Limit": "1"]) { host in
                try await host.start { $0.status.hostID = id }
                try await body(host, FleetHostStatus.key(prefix: host.prefix, host: id))
            }
        }

        @Test("two hosts apply, one rejects the next revision: fleet status names it, its error, and exits 1")
        func twoApplyOneRejects() async throws {
            try await FleetHarness.withFleet { strict in
                let cluster = strict.cluster
                let lenient = try FleetHarness(cluster: cluster, prefix: strict.prefix)
                let first = try await strict.publish(common: ["Limit": "50"])
                try await strict.start(maximumLimit: 100, version: "2.5.1") { $0.status.hostID = "host-a" }
                try await lenient.start(maximumLimit: 1000) { $0.status.hostID = "host-b" }
                defer { Task { await lenient.stop() } }

                let agreed = try await Self.waitForStatus(cluster, strict.prefix) { status, output in
                    status == 0 && output.hosts.count == 2
                }
                #expect(agreed.status == 0, "\(agreed.text)")
                #expect(agreed.decoded?.revision == first)
                #expect(agreed.decoded?.host("host-a")?.revision == first)
                #expect(agreed.decoded?.host("host-b")?.library == LibraryVersion.current)
                // The application's version, as its build gives it (an embedded Info.plist's
                // CFBundleShortVersionString); none when the build gives none.
                #expect(agreed.decoded?.host("host-a")?.version == "2.5.1", "\(agreed.text)")
                #expect(agreed.decoded?.host("host-b")?.version == nil, "\(agreed.text)")

                // Limit 150: host-a's validation rejects it, host-b applies it.
                let second = try await strict.publish(common: ["Limit": "150"])
                #expect(await lenient.waitFor("Limit", "150"))
                #expect(
                    try await strict.waitForOutcome("rejected")?.error?.contains("Limit must be a number up to 100")
                        == true
                )
                let split = try await Self.waitForStatus(cluster, strict.prefix) { _, output in
                    output.host("host-a")?.last?.outcome == "rejected" && output.host("host-b")?.current == true
                }
                #expect(split.status == 1, "\(split.text)")
                let output = try #require(split.decoded, "\(split.text)")
                #expect(output.revision == second)
                #expect(output.behind == 1)
                let rejecting = try #require(output.host("host-a"))
                #expect(!rejecting.current)
                #expect(rejecting.revision == first)
                #expect(rejecting.last?.revision == second)
                // Where and what kind, never the application's message (which may quote a value).
                #expect(rejecting.last?.error?.hasPrefix("'Limit': validation failed") == true, "\(split.text)")
                #expect(rejecting.last?.error?.contains("must be a number") == false)
                #expect(!rejecting.stale)
                let applying = try #require(output.host("host-b"))
                #expect(applying.current && applying.revision == second && applying.last?.outcome == "applied")

                // The table says the same in words, with the same exit status.
                let table = try Self.envctlStatus(cluster, strict.prefix, json: false)
                #expect(table.status == 1)
                #expect(table.text.contains("at revision \(second)"), "\(table.text)")
                #expect(table.text.contains("host-a rejected revision \(second): "), "\(table.text)")
                #expect(table.text.contains("'Limit': validation failed"), "\(table.text)")

                // A revision both accept: everyone runs the newest, exit 0.
                let third = try await strict.publish(common: ["Limit": "60"])
                let healed = try await Self.waitForStatus(cluster, strict.prefix) { status, _ in status == 0 }
                #expect(healed.status == 0, "\(healed.text)")
                #expect(healed.decoded?.hosts.allSatisfy { $0.revision == third } == true, "\(healed.text)")
            }
        }

        @Test("no rejection's message reaches the status key, whatever it quotes (a secret, a 20 KiB reason)")
        func secretsAndSize() async throws {
            try await Self.withHost("host-s") { host, key in
                let cluster = host.cluster

                let secret = "hunter2-secret-value"
                let rejected = try await host.publish(common: ["Limit": "1", "Token": secret])
                #expect(try await host.waitForOutcome("rejected") != nil)
                let output = try await Self.waitForStatus(cluster, host.prefix) { _, output in
                    output.host("host-s")?.last?.revision == rejected
                }
                let raw = try #require(try await Self.value(of: key, cluster))
                let text = String(decoding: raw.value, as: UTF8.self)
                #expect(!text.contains(secret), "\(text)")
                #expect(!output.text.contains(secret))
                #expect(text.contains("'Token': validation failed"), "\(text)")
                #expect(!text.contains("does not start with ok-"), "\(text)")
                #expect(raw.lease != 0)

                // A rejection whose message is 20 KiB: none of it leaves the host.
                let long = try await host.publish(common: ["Limit": "1", "Reason": "too long to keep whole. "])
                _ = try await Self.waitForStatus(cluster, host.prefix) { _, output in
                    output.host("host-s")?.last?.revision == long
                }
                let short = try #require(try await Self.value(of: key, cluster))
                let status = try #require(FleetHostStatus.decode(short.value))
                #expect(status.last?.error?.hasPrefix("'Reason': validation failed") == true)
                #expect(status.last?.error?.contains("too long") == false)
            }
        }

        @Test("fleet status names each host by its key, and marks a value whose own host member differs")
        func hostsNamedByKey() async throws {
            try await Self.withHost("host-a") { host, key in
                let cluster = host.cluster
                _ = try await Self.waitForStatus(cluster, host.prefix) { _, output in output.host("host-a") != nil }
                // host-a's value, copied under another host's key (as a host that may write there could).
                let value = try #require(try await Self.value(of: key, cluster)).value
                let client = try cluster.client()
                _ = try await client.put(FleetHostStatus.key(prefix: host.prefix, host: "host-z"), value)
                await client.shutdown()
                let output = try await Self.waitForStatus(cluster, host.prefix) { _, output in output.hosts.count == 2 }
                let decoded = try #require(output.decoded, "\(output.text)")
                #expect(decoded.host("host-a")?.claimedHost == nil, "\(output.text)")
                #expect(decoded.host("host-z")?.claimedHost == "host-a", "\(output.text)")
                let table = try Self.envctlStatus(cluster, host.prefix, json: false)
                #expect(table.text.contains("host-z: its status value says host 'host-a'"), "\(table.text)")
                #expect(table.text.contains("host differs"), "\(table.text)")
            }
        }

        @Test(
            "a status key goes with its lease: at once on a graceful stop, within the TTL when the daemon stops renewing"
        )
        func leases() async throws {
            try await FleetHarness.withFleet(size: 1, publishing: ["Limit": "1"]) { stopping in
                let cluster = stopping.cluster
                let dying = try FleetHarness(cluster: cluster, prefix: stopping.prefix)
                try await stopping.start {
                    $0.status.hostID = "stopping"; $0.status.ttl = .seconds(3)
                }
                try await dying.start {
                    $0.status.hostID = "dying"; $0.status.ttl = .seconds(3)
                }
                let both = try await Self.waitForStatus(cluster, stopping.prefix) { _, output in output.hosts.count == 2
                }
                #expect(both.decoded?.hosts.count == 2, "\(both.text)")

                // A graceful stop revokes the lease: the key is gone when the service has stopped.
                await stopping.stop()
                #expect(
                    try await Self.value(of: FleetHostStatus.key(prefix: stopping.prefix, host: "stopping"), cluster)
                        == nil
                )

                // A daemon that stops renewing (its tasks cancelled, no graceful stop, as when killed):
                // the key stays until etcd expires the lease, then goes by itself.
                await dying.abandon()
                let key = FleetHostStatus.key(prefix: stopping.prefix, host: "dying")
                #expect(try await Self.value(of: key, cluster) != nil)
                #expect(try await Self.waitFor(key, present: false, cluster))
                let none = try Self.envctlStatus(cluster, stopping.prefix)
                #expect(none.status == 0 && none.decoded?.hosts.isEmpty == true, "\(none.text)")
            }
        }

        @Test("a killed example-fleet-daemon: its key stays until the lease's TTL runs out, then goes by itself")
        func killedDaemon() async throws {
            try await FleetHarness.withFleet(size: 1) { host in
                let cluster = host.cluster
                try await host.writer.put(host.prefix + "Environments.plist", ExampleFleetDaemon.document())
                let daemon = try ExampleFleetDaemon(
                    cluster: cluster, prefix: host.prefix, host: "killed-1", directory: host.hostDirectory)
                defer { daemon.kill() }
                func daemonLog() -> String { daemon.log }

                let reported = try await Self.waitForStatus(cluster, host.prefix) { status, output in
                    status == 0 && output.host("killed-1") != nil
                }
                try #require(reported.decoded?.host("killed-1")?.current == true, "\(reported.text) \(daemonLog())")
                #expect(reported.decoded?.host("killed-1")?.version == LibraryVersion.current, "\(reported.text)")

                kill(daemon.process.processIdentifier, SIGKILL)
                daemon.process.waitUntilExit()
                let key = FleetHostStatus.key(prefix: host.prefix, host: "killed-1")
                #expect(try await Self.value(of: key, cluster) != nil)
                #expect(try await Self.waitFor(key, present: false, cluster))
            }
        }

        @Test("a burst of publishes: the status is written at most once a second, and ends at the newest revision")
        func writeRate() async throws {
            try await Self.withHost("host-r") { host, key in
                let cluster = host.cluster
                _ = try await Self.waitForStatus(cluster, host.prefix) { _, output in output.hosts.count == 1 }
                let before = try #require(try await Self.value(of: key, cluster))

                let started = ContinuousClock.now
                var newest: Int64 = 0
                for limit in 2...9 { newest = try await host.publish(common: ["Limit": String(limit)]) }
                #expect(await host.waitFor("Limit", "9"))
                let settled = try await Self.waitForStatus(cluster, host.prefix) { _, output in
                    output.host("host-r")?.revision == newest
                }
                #expect(settled.decoded?.host("host-r")?.last?.revision == newest, "\(settled.text)")
                let after = try #require(try await Self.value(of: key, cluster))
                let elapsed = ContinuousClock.now - started

                // Every write of the key since `before`, from etcd's history.
                var writes = 0
                let client = try cluster.client()
                defer { Task { await client.shutdown() } }
                for try await update in client.watch(prefix: key, from: before.modRevision + 1) {
                    guard case .changes(let revision, let changes) = update else { continue }
                    writes += changes.count
                    if revision >= after.modRevision { break }
                }
                let seconds = Int(elapsed.components.seconds) + 1
                #expect(writes >= 1)
                #expect(writes <= seconds + 1, "\(writes) writes in \(elapsed)")
            }
        }

        @Test("status keys are not documents: the daemon does not read them, and publish's transaction ignores them")
        func layout() async throws {
            let prefix = "/fleet/app/"
            let key = FleetHostStatus.key(prefix: prefix, host: "web-1")
            #expect(key == "/fleet/app/.status/web-1")
            #expect(!FleetState.isDocumentKey(key, prefix: prefix))
            #expect(FleetHostStatus.isValidHostID("0123abcd@worker-2"))
            #expect(!FleetHostStatus.isValidHostID("a/b"))
            #expect(!FleetHostStatus.isValidHostID(".."))
            #expect(!FleetHostStatus.isValidHostID(String(repeating: "a", count: 129)))
            // Host ids made from the machine id and an instance, or given, always name one key.
            var options = FleetStatusOptions()
            let machine = options.resolvedHostID(instance: nil)
            #expect(FleetHostStatus.isValidHostID(machine))
            #expect(options.resolvedHostID(instance: "eu west/1") == machine + "@eu_west_1")
            options.hostID = ".web 1/x"
            #expect(options.resolvedHostID(instance: "ignored") == "_web_1_x")
            #expect(throws: EtcdError.self) {
                try FleetStatusOptions(processEnvironment: [FleetStatusOptions.hostIDVariable: "a/b"])
            }
            let fromVariables = try FleetStatusOptions(processEnvironment: [
                FleetStatusOptions.hostIDVariable: "web-1", FleetStatusOptions.ttlVariable: "12",
                FleetStatusOptions.enabledVariable: "off",
            ])
            #expect(fromVariables.hostID == "web-1" && fromVariables.ttlSeconds == 12 && !fromVariables.isEnabled)

            try await FleetHarness.withFleet(size: 1) { host in
                let written = try await host.publish(common: ["Limit": "1"])
                let reader = try EtcdClient(
                    configuration: EtcdConfiguration(endpoints: host.cluster.endpoints, prefix: host.prefix))
                defer { Task { await reader.shutdown() } }
                let before = try await reader.readFleet()
                // A status written after the read: the fleet reads the same documents, and a publish
                // conditioned on the read still goes through.
                try await host.writer.put(FleetHostStatus.key(prefix: host.prefix, host: "web-1"), Data("{}".utf8))
                let after = try await reader.readFleet()
                #expect(after.entries == before.entries)
                #expect(after.configurationRevision == written)
                let committed = try await reader.commit(
                    puts: [(FleetState.mainKey(prefix: host.prefix), FleetHarness.document(common: ["Limit": "2"]))],
                    deletes: [], prefix: host.prefix, ifUnchangedSince: before.revision,
                    expecting: [FleetState.mainKey(prefix: host.prefix): written])
                #expect(committed != nil)
            }
        }

        @Test("an etcd role per host: readwrite on its own status key, read on the prefix; other keys refused")
        func rolePerHost() async throws {
            let secured = try await SecuredCluster(fleetUser: false)
            defer { secured.stop() }
            let (certificates, cluster) = (secured.certificates, secured.cluster)
            try await FleetHarness.withFleet(on: cluster, publishing: ["Limit": "1"]) { host in
                // The role the FleetStatus article documents, made with etcdctl.
                let own = FleetHostStatus.key(prefix: host.prefix, host: "host-a")
                let prefix = host.prefix
                // Off the cooperative pool (as the suite's `.blocking` trait already ensures): etcdctl
                // (and etcd's bcrypt) take seconds on a loaded machine.
                try await onThread {
                    try cluster.etcdctl(["role", "add", "fleet-host-a"])
                    try cluster.etcdctl(["role", "grant-permission", "fleet-host-a", "--prefix=true", "read", prefix])
                    try cluster.etcdctl(["role", "grant-permission", "fleet-host-a", "readwrite", own])
                    try cluster.etcdctl(["user", "add", "host-a:host-a-secret"])
                    try cluster.etcdctl(["user", "grant-role", "host-a", "fleet-host-a"])
                    // A host whose role lacks its status key: read on the prefix only.
                    try cluster.etcdctl(["role", "add", "fleet-reader"])
                    try cluster.etcdctl(["role", "grant-permission", "fleet-reader", "--prefix=true", "read", prefix])
                    try cluster.etcdctl(["user", "add", "reader:reader-secret"])
                    try cluster.etcdctl(["user", "grant-role", "reader", "fleet-reader"])
                }

                func configuration(_ user: String, _ password: String) -> EtcdConfiguration {
                    EtcdConfiguration(
                        endpoints: cluster.endpoints, prefix: host.prefix, userName: user, password: password,
                        tls: certificates.clientFiles)
                }
                try await host.start { configuration in
                    configuration.userName = "host-a"
                    configuration.password = "host-a-secret"
                    configuration.tls = certificates.clientFiles
                    configuration.status.hostID = "host-a"
                }
                let reader = try FleetHarness(cluster: cluster, prefix: host.prefix)
                try await reader.start { configuration in
                    configuration.userName = "reader"
                    configuration.password = "reader-secret"
                    configuration.tls = certificates.clientFiles
                    configuration.status.hostID = "host-r"
                }
                defer { Task { await reader.stop() } }

                // host-a's status arrives (lease granted, key written with its role).
                #expect(try await Self.waitFor(own, present: true, cluster, timeout: .seconds(20)))

                // With host-a's credentials: another host's key and the documents are refused.
                let client = try EtcdClient(configuration: configuration("host-a", "host-a-secret"))
                defer { Task { await client.shutdown() } }
                try await client.put(own, Data("{}".utf8))
                let other = await FleetSecurityTests.failure {
                    try await client.put(FleetHostStatus.key(prefix: host.prefix, host: "host-b"), Data("{}".utf8))
                }
                #expect(other.contains("permission denied"), "\(other)")
                let document = await FleetSecurityTests.failure {
                    try await client.put(FleetState.mainKey(prefix: host.prefix), FleetHarness.document())
                }
                #expect(document.contains("permission denied"), "\(document)")

                // The host refused its status key carries on: it applies the next revision.
                try await host.publish(common: ["Limit": "7"])
                #expect(await reader.waitFor("Limit", "7"))
                #expect(await host.waitFor("Limit", "7"))
                #expect(
                    try await Self.value(of: FleetHostStatus.key(prefix: host.prefix, host: "host-r"), cluster) == nil)
            }
        }
    }
#endif
