#if Fleet
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import Logging
    import Testing

    /// Hosts behind `etcd grpc-proxy` (Debian's etcd 3.4 binary), which serves gRPC only: the
    /// proxy killed and started again, and a member behind it stalled.
    @Suite(
        "etcd fleet through grpc-proxy", .serialized,
        .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"), .blocking)
    struct FleetProxyTests {
        @Test(
            "a host behind grpc-proxy applies changes; the proxy killed and restarted: the watch resumes, nothing is lost"
        )
        func proxyKilledAndRestarted() async throws {
            try await FleetHarness.withFleet(publishing: ["Counter": "0"]) { host in
                let cluster = host.cluster
                let proxy = try await EtcdGRPCProxy(
                    members: cluster.endpoints, log: cluster.root.appendingPathComponent("proxy.log"))
                defer { proxy.kill() }
                try await host.start(endpoints: [proxy.endpoint], requestTimeout: .seconds(5))
                let (seen, observation) = FleetLiveTests.observeCounter(host)
                defer { observation?.cancel() }
                try await host.publish(common: ["Counter": "1"])
                #expect(await host.waitFor("Counter", "1"), "\(cluster.log)")

                proxy.kill()
                for counter in 2...5 { try await host.publish(common: ["Counter": "\(counter)"]) }
                try await Task.sleep(for: .seconds(1))
                try await proxy.start()
                #expect(await host.waitFor("Counter", "5", timeout: .seconds(30)), "\(cluster.log)")

                // Idle past several request timeouts: the watch through the proxy stays, and the
                // next change arrives.
                try await Task.sleep(for: .seconds(12))
                try await host.publish(common: ["Counter": "6"])
                #expect(await host.waitFor("Counter", "6", timeout: .seconds(15)), "\(cluster.log)")
                try await FleetLiveTests.expectInOrder(seen, endingAt: 6)
            }
        }

        @Test("a member behind grpc-proxy stalls (SIGSTOP): the host behind the proxy still gets every change")
        func memberBehindProxyStalls() async throws {
            try await FleetHarness.withFleet(publishing: ["Counter": "0"]) { host in
                let cluster = host.cluster
                let proxy = try await EtcdGRPCProxy(
                    members: cluster.endpoints, log: cluster.root.appendingPathComponent("proxy.log"))
                defer { proxy.kill() }
                try await host.start(endpoints: [proxy.endpoint], requestTimeout: .seconds(5))
                let (seen, observation) = FleetLiveTests.observeCounter(host)
                defer { observation?.cancel() }
                try await host.publish(common: ["Counter": "1"])
                #expect(await host.waitFor("Counter", "1"), "\(cluster.log)")

                // The proxy's first member: the one its client starts with.
                cluster.pause(0)
                defer { cluster.resume(0) }
                let writer = try cluster.client(endpoints: Array(cluster.endpoints.dropFirst()))
                for counter in 2...6 {
                    try await host.publish(common: ["Counter": "\(counter)"], through: writer)
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(await host.waitFor("Counter", "6", timeout: .seconds(60)), "\(cluster.log)")
                try await FleetLiveTests.expectInOrder(seen, endingAt: 6)
                cluster.resume(0)
                await writer.shutdown()
            }
        }
    }
#endif
