#if Fleet
    import Environments
    import EnvironmentsDaemon
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import TestSupport
    import Testing

    #if canImport(Glibc)
        import Glibc
    #endif

    /// `envctl publish --stage` (issue 37.3–4) against a real three-member cluster with TLS and
    /// users, and real hosts: a stage that succeeds and widens, one whose hosts reject the change, a
    /// host SIGSTOPped mid-stage, and envctl killed mid-publish and resumed.
    @Suite(
        "staged publish", .serialized, .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"),
        .blocking)
    struct StagedPublishTests {
        /// An `envctl` run in the background, its output in a file, for tests that act while it waits.
        final class BackgroundEnvctl: @unchecked Sendable {
            let process = Process()
            let log: URL

            init(_ arguments: [String], directory: URL) throws {
                log = directory.appendingPathComponent("envctl-\(UUID().uuidString.prefix(8)).log")
                _ = FileManager.default.createFile(atPath: log.path, contents: nil)
                let output = try FileHandle(forWritingTo: log)
                process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
                process.arguments = arguments
                process.environment = operatorEnvironment()
                process.standardOutput = output
                process.standardError = output
                process.standardInput = FileHandle.nullDevice
                try process.run()
            }

            var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

            /// Waits (up to `timeout`) until the output contains `text`.
            func waitForOutput(_ text: String, timeout: Duration = .seconds(60)) async -> Bool {
                let deadline = ContinuousClock.now + timeout
                while ContinuousClock.now < deadline {
                    if output.contains(text) { return true }
                    if !process.isRunning { return output.contains(text) }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return false
            }

            /// Waits for the end; the exit status.
            func wait(timeout: Duration = .seconds(120)) async -> Int32? {
                let deadline = ContinuousClock.now + timeout
                while process.isRunning && ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(100))
                }
                if process.isRunning {
                    process.terminate()
                    return nil
                }
                return process.terminationStatus
            }
        }

        /// Runs envctl to its end, off the cooperative pool, where the hosts of these tests renew
        /// their status (a starved renewal lets a lease expire, and the publish rolls back). The
        /// suite's `.blocking` trait already ensures that; `onThread` predates the trait.
        static func envctl(_ arguments: [String], separately: Bool = false) async throws -> FinishedProcess {
            try await onThread {
                try runToEnd(
                    BuiltProducts.envctl, arguments, environment: operatorEnvironment(), separately: separately)
            }
        }

        /// Hosts of one fleet, in process, each with its host id, a status TTL of 15 s and requests
        /// that may take 5 s. A stage settles for the TTL; shorter ones expired in CI, where this
        /// process runs a hundred suites at once beside the sanitizer builds (a 5 s TTL with 2 s
        /// requests lost its lease while the host ran fine, and the publish rightly rolled back).
        static func hosts(
            _ cluster: EtcdCluster, prefix: String, _ names: [(String, Int)],
            configure: @escaping (inout EtcdConfiguration) -> Void = { _ in }
        ) async throws -> [String: FleetHarness] {
            var hosts: [String: FleetHarness] = [:]
            for (name, maximumLimit) in names {
                let host = try FleetHarness(cluster: cluster, prefix: prefix)
                try await host.start(requestTimeout: .seconds(5), maximumLimit: maximumLimit) {
                    $0.status.hostID = name
                    $0.status.ttl = .seconds(15)
                    configure(&$0)
                }
                hosts[name] = host
            }
            return hosts
        }

        /// Waits until every one of `names` reports a status under `prefix`.
        static func waitForReports(
            _ cluster: EtcdCluster, _ prefix: String, _ names: [String], extra: [String] = []
        ) async throws {
            let reported = try await FleetStatusTests.waitForStatus(cluster, prefix, extra: extra) { _, output in
                Set(names).isSubset(of: output.hosts.map(\.host))
            }
            try #require(Set(names).isSubset(of: reported.decoded?.hosts.map(\.host) ?? []), "\(reported.text)")
        }

        /// The value of `Limit` on each host, by host id.
        static func limits(_ hosts: [String: FleetHarness]) -> [String: String] {
            hosts.mapValues { (try? $0.environment?.require("Limit", as: String.self)) ?? "-" }
        }

        /// A document file with `Limit` set, in the cluster's directory.
        static func document(_ cluster: EtcdCluster, limit: String) throws -> String {
            let directory = cluster.root.appendingPathComponent("publish-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("Environments.plist")
            try FleetHarness.document(common: ["Limit": limit]).write(to: file)
            return file.path
        }

        static func stopAll(_ hosts: [String: FleetHarness]) async {
            for host in hosts.values { await host.stop() }
        }

        /// A three-member cluster with TLS and users, the fleet's document (`Limit = 10` unless
        /// `document` is given) and `names` as hosts in this process, each with its highest
        /// accepted `Limit`: what a test of staged publishes starts from.
        struct Fleet {
            let secured: SecuredCluster
            let writer: FleetHarness
            let hosts: [String: FleetHarness]
            var cluster: EtcdCluster { secured.cluster }
            var prefix: String { writer.prefix }
            /// envctl's endpoint, prefix, TLS and user options for this fleet.
            var options: [String] { secured.envctlOptions(prefix: prefix) }
        }

        /// Runs `body` with a ``Fleet`` whose hosts have all reported their status, then stops the
        /// hosts and the cluster, in that order, whatever `body` did.
        static func withFleet(
            _ names: [(String, Int)], document: Data = FleetHarness.document(common: ["Limit": "10"]),
            _ body: (Fleet) async throws -> Void
        ) async throws {
            let secured = try await SecuredCluster()
            defer { secured.stop() }
            let writer = try FleetHarness(cluster: secured.cluster)
            try await writer.writer.put(writer.prefix + "Environments.plist", document)
            let hosts = try await Self.hosts(
                secured.cluster, prefix: writer.prefix, names, configure: secured.configureHost)
            let fleet = Fleet(secured: secured, writer: writer, hosts: hosts)
            do {
                try await Self.waitForReports(
                    fleet.cluster, fleet.prefix, names.map(\.0), extra: secured.credentialOptions)
                try await body(fleet)
            } catch {
                await Self.stopAll(hosts)
                throw error
            }
            await Self.stopAll(hosts)
        }

        @Test(
            "a stage held at one host, fleet status shows it, other publishes wait, resume widens to all"
        )
        func stagesWidenOverTLS() async throws {
            let names = ["web-1", "web-2", "web-3", "web-4"]
            try await Self.withFleet(names.map { ($0, 100) }) { fleet in
                let (cluster, writer, prefix, hosts) = (fleet.cluster, fleet.writer, fleet.prefix, fleet.hosts)
                let options = fleet.options
                let tlsOptions = fleet.secured.credentialOptions

                // One host first: the one whose position is lowest. envctl holds the publish after it.
                let first = names.min { FleetRollout.position(of: $0) < FleetRollout.position(of: $1) }!
                let file = try Self.document(cluster, limit: "20")
                let held = try await Self.envctl(
                    ["publish"] + options + ["--stage", "1", "--settle", "1s", "--stage-timeout", "60s", file])
                #expect(held.status == 0, "\(held.output)")
                #expect(held.output.contains("stage 1 of 1 (1 host): 1 of 4 hosts: \(first)"), "\(held.output)")
                #expect(held.output.contains("held at stage 1"), "\(held.output)")
                #expect(await hosts[first]!.waitFor("Limit", "20"))
                #expect(
                    Self.limits(hosts).filter { $0.value == "20" }.keys.sorted() == [first], "\(Self.limits(hosts))")
                #expect(
                    try await writer.writer.range(prefix: prefix + "Environments.plist").keyValues.first {
                        $0.key == prefix + "Environments.plist"
                    }?.value == FleetHarness.document(common: ["Limit": "10"]))

                // fleet status: the staged host runs the candidate, the others the fleet's documents.
                let status = try await Self.envctl(["fleet", "status", "--json"] + options, separately: true)
                #expect(status.status == 0, "\(status.output)")
                #expect(status.standardOutput.contains("\"rollout\""), "\(status.standardOutput)")
                let table = try await Self.envctl(["fleet", "status"] + options)
                #expect(table.output.contains("stage 1 of 1 (1 host), held"), "\(table.output)")

                // While it is in progress, a plain publish is refused, with what to do.
                let refused = try await Self.envctl(["publish"] + options + [try Self.document(cluster, limit: "30")])
                #expect(refused.status == 1)
                #expect(refused.output.contains("a staged publish is in progress"), "\(refused.output)")
                #expect(refused.output.contains("--resume") && refused.output.contains("--abort"), "\(refused.output)")
                // A held publish at its last step needs the next steps.
                let noSteps = try await Self.envctl(["publish", "--resume"] + options)
                #expect(noSteps.status == 1 && noSteps.output.contains("--resume --stage 100%"), "\(noSteps.output)")

                let resumed = try await Self.envctl(
                    ["publish", "--resume", "--stage", "50%,100%", "--settle", "1s"] + options)
                #expect(resumed.status == 0, "\(resumed.output)")
                #expect(resumed.output.contains("stage 2 of 3 (50%): 2 of 4 hosts"), "\(resumed.output)")
                #expect(resumed.output.contains("stage 3 of 3 (100%): 4 of 4 hosts"), "\(resumed.output)")
                #expect(resumed.output.contains("published the candidate"), "\(resumed.output)")
                for name in names { #expect(await hosts[name]!.waitFor("Limit", "20"), "\(name)") }
                // The candidate is now the fleet's documents, and no staged key is left.
                let (keys, _) = try await writer.writer.range(prefix: prefix + "Environments.plist")
                #expect(keys.map(\.key) == [prefix + "Environments.plist"], "\(keys.map(\.key))")
                #expect(keys.first?.value == FleetHarness.document(common: ["Limit": "20"]))
                let after = try await FleetStatusTests.waitForStatus(cluster, prefix, extra: tlsOptions) {
                    status, output in
                    status == 0 && output.hosts.count == 4 && output.hosts.allSatisfy(\.current)
                }
                #expect(after.status == 0, "\(after.text)")
            }
        }

        @Test("a stage whose host rejects the change: envctl names it and why, and every host goes back")
        func rejectionRollsBack() async throws {
            try await Self.withFleet([("lenient-1", 1000), ("strict-1", 100), ("lenient-2", 1000)]) { fleet in
                let (cluster, writer, prefix, hosts) = (fleet.cluster, fleet.writer, fleet.prefix, fleet.hosts)

                let published = try await Self.envctl(
                    ["publish"] + fleet.options + [
                        "--stage", "lenient-1,strict-1,100%", "--settle", "1s",
                        try Self.document(cluster, limit: "150"),
                    ])
                #expect(published.status == 1, "\(published.output)")
                #expect(
                    published.output.contains("stage 1 of 2 (lenient-1,strict-1): 2 of 3 hosts"), "\(published.output)")
                #expect(
                    published.output.contains("strict-1 rejected the candidate: ")
                        && published.output.contains("'Limit': validation failed"), "\(published.output)")
                // Where and what kind, never the host's message: that stays in its journal.
                #expect(!published.output.contains("must be a number"), "\(published.output)")
                #expect(published.output.contains("rolled back at revision"), "\(published.output)")
                #expect(!published.output.contains("stage 2 of 2"), "\(published.output)")
                // lenient-1 ran it and goes back; lenient-2 was never in a stage.
                #expect(await hosts["lenient-1"]!.waitFor("Limit", "10"))
                #expect(Self.limits(hosts) == ["lenient-1": "10", "strict-1": "10", "lenient-2": "10"])
                #expect(await hosts["lenient-2"]!.service?.reloader.lastReloadReport == nil, "lenient-2 never reloaded")
                let (keys, _) = try await writer.writer.range(prefix: prefix + "Environments.plist")
                #expect(keys.map(\.key) == [prefix + "Environments.plist"], "\(keys.map(\.key))")
            }
        }

        @Test(
            "a host SIGSTOPped mid-stage stops renewing: the publish stops and rolls back; resumed, the host goes back too"
        )
        func stoppedHostRollsBack() async throws {
            try await Self.withFleet([("steady-1", 100)], document: ExampleFleetDaemon.document(name: "one")) { fleet in
                let (secured, cluster, writer, prefix, others) = (
                    fleet.secured, fleet.cluster, fleet.writer, fleet.prefix, fleet.hosts
                )
                let daemon = try ExampleFleetDaemon(
                    cluster: cluster, prefix: prefix, host: "paused-1", directory: writer.hostDirectory, ttl: 8,
                    environment: secured.daemonEnvironment)
                defer { daemon.kill() }
                try await Self.waitForReports(
                    cluster, prefix, ["paused-1", "steady-1"], extra: secured.credentialOptions)

                let file = writer.hostDirectory.appendingPathComponent("publish/Environments.plist")
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try ExampleFleetDaemon.document(name: "two").write(to: file)
                let envctl = try BackgroundEnvctl(
                    ["publish"] + secured.envctlOptions(prefix: prefix) + [
                        "--stage", "paused-1,100%", "--settle", "30s", file.path,
                    ], directory: writer.hostDirectory)
                #expect(await envctl.waitForOutput("stage 1: paused-1 runs the candidate"), "\(envctl.output)")
                Glibc.kill(daemon.process.processIdentifier, SIGSTOP)
                let status = await envctl.wait()
                Glibc.kill(daemon.process.processIdentifier, SIGCONT)
                #expect(status == 1, "\(envctl.output)")
                #expect(
                    envctl.output.contains("paused-1 stopped renewing its status"), "\(envctl.output)")
                #expect(envctl.output.contains("rolled back at revision"), "\(envctl.output)")
                #expect(!envctl.output.contains("stage 2 of 2"), "\(envctl.output)")
                #expect(Self.limits(others) == ["steady-1": "-"])
                #expect((try? others["steady-1"]!.environment?.require("Database.Name", as: String.self)) == "one")
                // Continued, the daemon reads the rollback and runs the fleet's documents again.
                let back = try await FleetStatusTests.waitForStatus(cluster, prefix, extra: secured.credentialOptions) {
                    status, output in status == 0 && output.host("paused-1")?.current == true
                }
                #expect(back.status == 0, "\(back.text) \(daemon.log)")
                #expect(back.decoded?.host("paused-1")?.revision == back.decoded?.revision, "\(back.text)")
            }
        }

        @Test("envctl killed mid-publish: the stage stays in force; --resume finishes it, --abort rolls another back")
        func killedAndResumed() async throws {
            let names = ["node-1", "node-2", "node-3"]
            try await Self.withFleet(names.map { ($0, 100) }) { fleet in
                let (cluster, writer, hosts) = (fleet.cluster, fleet.writer, fleet.hosts)
                let endpoints = fleet.options

                let first = names.min { FleetRollout.position(of: $0) < FleetRollout.position(of: $1) }!
                let envctl = try BackgroundEnvctl(
                    ["publish"] + endpoints + [
                        "--stage", "1,100%", "--settle", "600s", try Self.document(cluster, limit: "20"),
                    ],
                    directory: writer.hostDirectory)
                #expect(await envctl.waitForOutput("settling"), "\(envctl.output)")
                envctl.process.interrupt()
                Glibc.kill(envctl.process.processIdentifier, SIGKILL)
                _ = await envctl.wait()
                // The stage stays in force: one host runs the candidate, the rest the fleet's documents.
                #expect(await hosts[first]!.waitFor("Limit", "20"))
                #expect(Self.limits(hosts).filter { $0.value == "20" }.keys.sorted() == [first])

                let resumed = try await Self.envctl(["publish", "--resume", "--settle", "1s"] + endpoints)
                #expect(resumed.status == 0, "\(resumed.output)")
                #expect(resumed.output.contains("resuming staged publish"), "\(resumed.output)")
                #expect(resumed.output.contains("stage 2 of 2 (100%): 3 of 3 hosts"), "\(resumed.output)")
                for name in names { #expect(await hosts[name]!.waitFor("Limit", "20"), "\(name)") }

                // Another, held at its first stage, then aborted: every host runs 20 again.
                let held = try await Self.envctl(
                    ["publish"] + endpoints + [
                        "--stage", "2", "--settle", "1s", try Self.document(cluster, limit: "30"),
                    ])
                #expect(held.status == 0 && held.output.contains("held at stage 1"), "\(held.output)")
                #expect(Self.limits(hosts).values.filter { $0 == "30" }.count == 2, "\(Self.limits(hosts))")
                let aborted = try await Self.envctl(["publish", "--abort"] + endpoints)
                #expect(aborted.status == 0, "\(aborted.output)")
                #expect(aborted.output.contains("rolled back at revision"), "\(aborted.output)")
                for name in names { #expect(await hosts[name]!.waitFor("Limit", "20"), "\(name)") }
                let nothing = try await Self.envctl(["publish", "--abort"] + endpoints)
                #expect(
                    nothing.status == 1 && nothing.output.contains("no staged publish in progress"), "\(nothing.output)"
                )
            }
        }

        @Test("steps: shares, counts and host ids; a share is at least one host, and a stage never narrows")
        func steps() throws {
            #expect(
                try FleetRollout.Step.parse("5%,25%,100%") == [.percent(5), .percent(25), .percent(100)])
            #expect(
                try FleetRollout.Step.parse("web-1,web-2,3,host:42,100%")
                    == [.hosts(["web-1", "web-2"]), .count(3), .hosts(["42"]), .percent(100)])
            for bad in ["0%", "101%", "", "5%,,", "a b", "0", String(repeating: "1%,", count: 21) + "1%"] {
                #expect(throws: RolloutError.self, "\(bad)") { try FleetRollout.Step.parse(bad) }
            }
            var record = FleetRollout(
                id: "t", base: 1, baseFingerprint: "a", fingerprint: "b", documents: ["Environments.plist"],
                steps: [.percent(5), .hosts(["z-9"]), .count(50), .percent(100)], settle: 1, startedBy: "t",
                started: Date(timeIntervalSince1970: 1_800_000_000))
            let hosts = (1...100).map { "host-\($0)" } + ["z-9"]
            record.widen(to: 0, reporting: hosts)
            let stage1 = hosts.filter(record.includes(host:))
            #expect(stage1.count == 6)  // 5% of 101, rounded up
            record.widen(to: 1, reporting: hosts)
            let stage2 = hosts.filter(record.includes(host:))
            #expect(Set(stage1).isSubset(of: stage2) && stage2.contains("z-9"))
            record.widen(to: 2, reporting: hosts)
            let stage3 = hosts.filter(record.includes(host:))
            #expect(stage3.count == 50 && Set(stage2).isSubset(of: stage3))
            record.widen(to: 3, reporting: hosts)
            #expect(record.includes(host: "a-newcomer") && record.cutoff == FleetRollout.everyHost)
            // The record says the same after a round trip through its JSON.
            #expect(FleetRollout.decode(try record.encoded()) == record)
            // The position is the same on every run: a host stays in or out across restarts.
            // Pinned (FNV-1a 64, fmix64, top 32 bits, as the doc says; computed apart in Python):
            // a change of the hash would move hosts in or out of a publish that is in progress.
            #expect(FleetRollout.position(of: "web-1") == 3_328_440_788)
            #expect(FleetRollout.position(of: "web-2") == 2_376_072_072)
        }
    }
#endif
