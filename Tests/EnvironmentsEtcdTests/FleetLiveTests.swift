#if Fleet
    import Environments
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import Locking
    import Logging
    import TestSupport
    import Testing

    /// The fleet mode against a real three-member etcd cluster on loopback, started by the tests.
    @Suite(
        "etcd fleet", .serialized, .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"),
        .blocking)
    struct FleetLiveTests {
        /// Every `Counter` value the fleet's environment tells its observers of, in order, for as
        /// long as the observation is kept.
        static func observeCounter(_ fleet: FleetHarness) -> (seen: Locked<[Int]>, observation: ObserverToken?) {
            let seen = Locked<[Int]>([])
            let observation = fleet.environment?.onChange { change in
                if let value = (try? change.current.require("Counter", as: String.self)).flatMap(Int.init) {
                    seen.withLock { $0.append(value) }
                }
            }
            return (seen, observation)
        }

        /// Waits until the observers have been told of `last`, then expects every value they were
        /// told of to be newer than the one before: nothing went back or was skipped over on the
        /// way to the last.
        static func expectInOrder(
            _ seen: Locked<[Int]>, endingAt last: Int, sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            // Observers run on the environment's queue, after the value is in place.
            for _ in 0..<600 where seen.withLock({ $0.last }) != last { try await Task.sleep(for: .milliseconds(100)) }
            let values = seen.withLock { $0 }
            #expect(
                values == values.sorted() && Set(values).count == values.count, "\(values)",
                sourceLocation: sourceLocation)
            #expect(values.last == last, sourceLocation: sourceLocation)
        }

        @Test("start: values from etcd, with the key and revision as provenance; host files override")
        func startAndValues() async throws {
            try await FleetHarness.withFleet { fleet in
                let revision = try await fleet.publish(
                    common: ["Region": "fleet", "Port": "80"], production: ["Mode": "live"])
                // The host overrides one setting with a local drop-in; it has no main file at all.
                let dropIns = fleet.hostDirectory.appendingPathComponent("Environments.plist.d")
                try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
                try Data(FleetHarness.document(common: ["Port": "8080"])).write(
                    to: dropIns.appendingPathComponent("50-host.plist"))
                try await fleet.start()
                let environment = try #require(fleet.environment)
                #expect((try? environment.require("Region", as: String.self)) == "fleet")
                #expect((try? environment.require("Mode", as: String.self)) == "live")
                #expect((try? environment.require("Port", as: String.self)) == "8080")
                let source = try #require(environment.configuredValue(forKey: "Region")?.source.file)
                #expect(source == "etcd:\(fleet.prefix)Environments.plist@\(revision)")
            }
        }

        @Test("a change is applied in milliseconds; one the application rejects is rejected and the last good stays")
        func changesAppliedAndRejected() async throws {
            try await FleetHarness.withFleet(publishing: ["Limit": "10"]) { fleet in
                try await fleet.start()
                try await fleet.publish(common: ["Limit": "20"])
                #expect(await fleet.waitFor("Limit", "20"))
                #expect(try await fleet.waitForOutcome("applied")?.outcome == "applied")
                // Rejected by the application's validation: the host keeps 20.
                try await fleet.publish(common: ["Limit": "500"])
                let rejected = try await fleet.waitForOutcome("rejected")
                #expect(rejected?.outcome == "rejected")
                #expect(
                    rejected?.error?.contains("Limit must be a number up to 100") == true,
                    "\(String(describing: rejected))")
                #expect((try? fleet.environment?.require("Limit", as: String.self)) == "20")
                // A malformed document: rejected too, naming the key.
                try await fleet.writer.put(fleet.prefix + "Environments.plist", Data("<plist><dict>".utf8))
                // Waits for the rejection (not a fixed time: under load it came after 300 ms once).
                let malformed = "etcd:\(fleet.prefix)Environments.plist@"
                let rejectedMalformed = try await fleet.waitForReload { $0.error?.contains(malformed) == true }
                #expect(
                    rejectedMalformed?.error?.contains(malformed) == true, "\(String(describing: rejectedMalformed))")
                #expect((try? fleet.environment?.require("Limit", as: String.self)) == "20")
                try await fleet.publish(common: ["Limit": "30"])
                #expect(await fleet.waitFor("Limit", "30"))
                // A document with a key path far past its bound (once a stack overflow in every fleet
                // daemon, at every restart): rejected, naming the key; the last good values stay.
                let deep = Array(repeating: "Level", count: 5_000).joined(separator: ".")
                try await fleet.publish(common: [deep: "x", "Limit": "40"])
                let rejectedDeep = try await fleet.waitForReload { $0.error?.contains("not a valid key path") == true }
                #expect(rejectedDeep?.outcome == "rejected")
                #expect(
                    rejectedDeep?.error?.contains("not a valid key path") == true, "\(String(describing: rejectedDeep))"
                )
                #expect((try? fleet.environment?.require("Limit", as: String.self)) == "30")
                try await fleet.publish(common: ["Limit": "50"])
                #expect(await fleet.waitFor("Limit", "50"))
            }
        }

        @Test("the member in use is killed while changes keep coming: another takes over and no update is lost")
        func failover() async throws {
            try await FleetHarness.withFleet(publishing: ["Counter": "0"]) { fleet in
                try await fleet.start()
                let (seen, observation) = Self.observeCounter(fleet)
                defer { observation?.cancel() }
                // Writes go to the other members, so that they keep coming while the member dies.
                let (inUse, victim, writer) = try fleet.memberInUse()
                for counter in 1...40 {
                    try await fleet.publish(common: ["Counter": "\(counter)"], through: writer)
                    if counter == 15 { fleet.cluster.kill(victim) }
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(await fleet.waitFor("Counter", "40"), "\(fleet.cluster.log)")
                #expect(fleet.fleet?.client.currentEndpoint != inUse)
                try await Self.expectInOrder(seen, endingAt: 40)
                await writer.shutdown()
            }
        }

        @Test(
            "the member in use stalls (SIGSTOP, its connections open) while changes are published: noticed, another takes over, nothing is lost"
        )
        func stalledMember() async throws {
            try await FleetHarness.withFleet(publishing: ["Counter": "0"]) { fleet in
                let cluster = fleet.cluster
                // The default request timeout, 5 s: the stall is noticed within it.
                try await fleet.start(requestTimeout: EtcdConfiguration(endpoints: [], prefix: "/").requestTimeout)
                let (seen, observation) = Self.observeCounter(fleet)
                defer { observation?.cancel() }
                // The watch is in place and has delivered a change (so it is the stream that stalls).
                try await fleet.publish(common: ["Counter": "1"])
                #expect(await fleet.waitFor("Counter", "1"))
                let (inUse, victim, writer) = try fleet.memberInUse()
                cluster.pause(victim)
                defer { cluster.resume(victim) }
                let stopped = ContinuousClock.now
                for counter in 2...20 {
                    try await fleet.publish(common: ["Counter": "\(counter)"], through: writer)
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(await fleet.waitFor("Counter", "20", timeout: .seconds(60)), "\(cluster.log)")
                let applied = ContinuousClock.now - stopped
                #expect(fleet.fleet?.client.currentEndpoint != inUse)
                try await Self.expectInOrder(seen, endingAt: 20)
                // For the notes, not asserted: from SIGSTOP until the last change was applied elsewhere.
                Logger(label: "fleet-tests").notice("stalled member: the last change applied \(applied) after SIGSTOP")

                // A read that starts on the stalled member: its request times out, and the next member
                // answers.
                let reader = try EtcdClient(
                    configuration: EtcdConfiguration(
                        endpoints: [inUse] + cluster.endpoints.filter { $0 != inUse }, prefix: fleet.prefix,
                        requestTimeout: .seconds(2)))
                let read = try await reader.readFleet()
                await reader.shutdown()
                let main = try #require(read.entries[fleet.prefix + "Environments.plist"])
                #expect(String(decoding: main.value, as: UTF8.self).contains("<string>20</string>"))
                cluster.resume(victim)
                await writer.shutdown()
            }
        }

        @Test("an idle daemon sends no reads: its watch hears the members' progress notifications")
        func idleWithoutReads() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                let cluster = fleet.cluster
                try await fleet.start(requestTimeout: .seconds(2))
                try await fleet.publish(common: ["Version": "2"])
                #expect(await fleet.waitFor("Version", "2"))
                func calls(_ method: String) throws -> Int {
                    try cluster.members.indices.reduce(0) { $0 + (try cluster.startedCalls(method, member: $1)) }
                }
                let (ranges, statuses) = (try calls("Range"), try calls("Status"))
                // Five request timeouts: the keepalive reads of before would have sent five.
                try await Task.sleep(for: .seconds(10))
                #expect(try calls("Range") == ranges)
                // Nor was the watch left for a silent member: the same watch, on the same member.
                #expect(try calls("Watch") == 1, "\(cluster.log)")
                // The leader check, every 6 request timeouts (12 s here): at most once.
                #expect(try calls("Status") - statuses <= 1)
            }
        }

        @Test(
            "the member watched loses its leader (the two others killed): its status says so, and the watch is left within 6 request timeouts"
        )
        func memberWithoutLeader() async throws {
            let cluster = try await EtcdCluster(size: 3)
            defer { cluster.stop() }
            // One endpoint: the watch has nowhere else to go, and ends with the reason.
            let client = try cluster.client(endpoints: [cluster.endpoints[0]])
            let timeout = Duration.seconds(1)
            let watcher = try EtcdClient(
                configuration: EtcdConfiguration(
                    endpoints: [cluster.endpoints[0]], prefix: "/fleet/", requestTimeout: timeout))
            let revision = try await client.range(prefix: "/fleet/").revision
            await client.shutdown()
            let watch = watcher.watch(prefix: "/fleet/", from: revision + 1)
            try await Task.sleep(for: .milliseconds(500))
            cluster.kill(1)
            cluster.kill(2)
            let killed = ContinuousClock.now
            let failure = await FleetSecurityTests.failure {
                _ = try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for try await _ in watch {} }
                    group.addTask {
                        try await Task.sleep(for: .seconds(30))
                        throw EtcdError(operation: "wait for the watch to end", message: "still watching after 30 s")
                    }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
            let noticed = ContinuousClock.now - killed
            await watcher.shutdown()
            #expect(failure.contains("has no leader"), "\(failure)")
            // The leader check runs every 6 request timeouts; the member notices its lost leader
            // after its election timeout (0.5 s here).
            #expect(noticed < timeout * EtcdClient.leaderCheckPeriods + .seconds(3), "\(noticed)")
        }

        @Test("the whole cluster stopped and restarted: the daemon keeps its configuration and catches up")
        func wholeClusterRestarted() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                try await fleet.start()
                fleet.cluster.killAll()
                try await Task.sleep(for: .milliseconds(500))
                #expect((try? fleet.environment?.require("Version", as: String.self)) == "1")
                try await fleet.cluster.restartAll()
                try await fleet.publish(common: ["Version": "2"])
                #expect(await fleet.waitFor("Version", "2", timeout: .seconds(30)), "\(fleet.cluster.log)")
            }
        }

        @Test("a start while etcd is down uses the cache and catches up; with no cache it fails clearly")
        func startFromCache() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { first in
                let cluster = first.cluster
                try await first.start()
                try await first.publish(common: ["Version": "2"])
                #expect(await first.waitFor("Version", "2"))
                await first.stop()
                #expect(
                    FileManager.default.fileExists(
                        atPath: first.cacheDirectory.appendingPathComponent("fleet-cache.json").path))

                cluster.killAll()
                // The same host (same cache) starts while no member answers.
                try await first.start()
                #expect(first.fleet?.startedFromCache == true)
                #expect((try? first.environment?.require("Version", as: String.self)) == "2")
                try await cluster.restartAll()
                try await first.publish(common: ["Version": "3"])
                #expect(await first.waitFor("Version", "3", timeout: .seconds(30)), "\(cluster.log)")
                await first.stop()

                // Another host, with no cache, while etcd is down: a clear error.
                cluster.killAll()
                let second = try FleetHarness(cluster: cluster)
                await #expect {
                    try await second.start()
                } throws: { error in
                    let text = "\(error)"
                    return text.contains("no endpoint answered") && text.contains("no cached fleet configuration")
                }
            }
        }

        @Test("the first good read is cached: a daemon that never saw a change starts from it while etcd is down")
        func firstReadIsCached() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { host in
                try await host.start()
                await host.stop()
                #expect(
                    FileManager.default.fileExists(
                        atPath: host.cacheDirectory.appendingPathComponent("fleet-cache.json").path))
                host.cluster.killAll()
                try await host.start()
                #expect(host.fleet?.startedFromCache == true)
                #expect((try? host.environment?.require("Version", as: String.self)) == "1")
            }
        }

        @Test("a watch that resumes from a compacted revision reads the fleet whole")
        func compaction() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                let cluster = fleet.cluster
                // The daemon knows one member only: while it is down, it cannot resume.
                try await fleet.start(endpoints: [cluster.members[0].endpoint])
                cluster.kill(0)
                let writer = try cluster.client(endpoints: Array(cluster.endpoints.dropFirst()))
                var revision: Int64 = 0
                for version in 2...5 {
                    revision = try await fleet.publish(common: ["Version": "\(version)"], through: writer)
                }
                try cluster.compact(revision)
                try cluster.restart(0)
                #expect(await fleet.waitFor("Version", "5", timeout: .seconds(30)), "\(cluster.log)")
                await writer.shutdown()
            }
        }
    }
#endif
