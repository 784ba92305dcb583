#if Fleet
    import Environments
    import EnvironmentsDaemon
    import EnvironmentsEtcd
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import TestSupport
    import Testing

    /// Only the layout's keys are read (`Environments.plist`, `Environments.plist.d/NAME.plist`),
    /// and a limit that the documents exceed is named, against a real three-member cluster.
    @Suite(
        "etcd fleet: the layout and its limits", .serialized,
        .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"), .blocking)
    struct FleetLayoutTests {
        /// 1.3 MB: below etcd's default request limit (1.5 MiB), above the tests' document limit.
        /// Made on each use: a `Data` held by a static is reported as a leak by LeakSanitizer.
        static var blob: Data { Data(repeating: UInt8(ascii: "x"), count: 1_300_000) }

        /// Limits the blobs would exceed many times over, were they read.
        static var tight: FleetLimits {
            var limits = FleetLimits()
            limits.documentBytes = 1 << 20
            limits.totalBytes = 2 << 20
            return limits
        }

        @Test(
            "50 blobs of 1.3 MB under the prefix outside the layout: the daemon starts, and never reads or reloads for them"
        )
        func foreignKeysAreNeverRead() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                for index in 0..<50 {
                    try await fleet.writer.put(fleet.prefix + "blobs/\(index)", Self.blob)
                }
                // Between the documents' keys, but not documents: listed by name, never read.
                for key in [
                    "Environments.plist.bak", "Environments.plist.d/notes.txt", "Environments.plist.d/old/50-eu.plist",
                ] {
                    try await fleet.writer.put(fleet.prefix + key, Self.blob)
                }
                try await fleet.writer.put(
                    fleet.prefix + "Environments.plist.d/50-eu.plist", FleetHarness.document(common: ["Region": "eu"]))
                try await fleet.start(limits: Self.tight)
                #expect((try? fleet.environment?.require("Version", as: String.self)) == "1")
                #expect((try? fleet.environment?.require("Region", as: String.self)) == "eu")
                #expect(fleet.fleet?.startedFromCache == false)

                // Keys that are not documents change: the watch goes past them, and nothing reloads.
                try await fleet.writer.put(fleet.prefix + "blobs/0", Self.blob + Data("2".utf8))
                let last = try await fleet.writer.put(fleet.prefix + "Environments.plist.d/old/50-eu.plist", Self.blob)
                let layer = try #require(fleet.fleet?.layer)
                for _ in 0..<2000 where layer.revision < last { try await Task.sleep(for: .milliseconds(10)) }
                #expect(layer.revision == last)
                #expect(await fleet.service?.reloader.lastReloadReport == nil)

                // A document changes: applied.
                try await fleet.publish(common: ["Version": "2"])
                #expect(await fleet.waitFor("Version", "2"))
                #expect(try await fleet.waitForOutcome("applied")?.outcome == "applied")
            }
        }

        @Test("a document past the size limit: the start fails naming the limit, the key and how to change it")
        func documentTooLargeAtStart() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                let key = fleet.prefix + "Environments.plist.d/50-big.plist"
                try await fleet.writer.put(key, Self.blob)
                await #expect {
                    try await fleet.start(limits: Self.tight)
                } throws: { error in
                    let text = "\(error)"
                    return text.contains("etcd:\(key)") && text.contains("limit on document bytes")
                        && text.contains("1 MiB") && text.contains("ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES")
                        && !text.contains("no endpoint answered")
                }
                // With the limit raised, as the error says, it starts (the blob is no property list,
                // but that is the next error, about the document itself).
                var raised = Self.tight
                raised.documentBytes = 2 << 20
                await #expect {
                    try await fleet.start(limits: raised)
                } throws: { error in
                    "\(error)".contains("etcd:\(key)@") && !"\(error)".contains("limit on")
                }
            }
        }

        @Test("too many documents, or too many bytes together: each named, with its value and variable")
        func countAndTotalLimits() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                for name in ["10-a", "20-b"] {
                    try await fleet.writer.put(
                        fleet.prefix + "Environments.plist.d/\(name).plist", FleetHarness.document(common: [name: "1"]))
                }
                var two = FleetLimits()
                two.documents = 2
                await #expect {
                    try await fleet.start(limits: two)
                } throws: { error in
                    let text = "\(error)"
                    return text.contains("limit on documents") && text.contains("3 documents")
                        && text.contains("limit of 2") && text.contains("ENVIRONMENTS_ETCD_MAX_DOCUMENTS")
                        && text.contains("etcd:\(fleet.prefix)Environments.plist.d/20-b.plist")
                }

                // Two documents of 700 KB each: each below 1 MiB, together above 1 MiB.
                let padded = FleetHarness.document(common: ["Padding": String(repeating: "p", count: 700_000)])
                try await fleet.writer.put(fleet.prefix + "Environments.plist.d/10-a.plist", padded)
                try await fleet.writer.put(fleet.prefix + "Environments.plist.d/20-b.plist", padded)
                var total = FleetLimits()
                total.totalBytes = 1 << 20
                await #expect {
                    try await fleet.start(limits: total)
                } throws: { error in
                    let text = "\(error)"
                    return text.contains("limit on total bytes") && text.contains("1 MiB")
                        && text.contains("ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES")
                        && text.contains("etcd:\(fleet.prefix)Environments.plist.d/20-b.plist")
                }
            }
        }

        @Test("a running daemon: a document past a limit is a rejected reload naming it, and the fix applies")
        func documentTooLargeWhileRunning() async throws {
            try await FleetHarness.withFleet(publishing: ["Version": "1"]) { fleet in
                try await fleet.start(limits: Self.tight)
                let key = fleet.prefix + "Environments.plist.d/50-big.plist"
                try await fleet.writer.put(key, Self.blob)
                let rejected = try await fleet.waitForOutcome("rejected", timeout: .seconds(20))
                #expect(rejected?.outcome == "rejected")
                #expect(
                    rejected?.error?.contains("etcd:\(key)") == true
                        && rejected?.error?.contains("limit on document bytes") == true
                        && rejected?.error?.contains("ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES") == true,
                    "\(String(describing: rejected))")
                #expect((try? fleet.environment?.require("Version", as: String.self)) == "1")
                // The document is fixed: read whole again, and applied.
                try await fleet.writer.put(key, FleetHarness.document(common: ["Version": "2"]))
                #expect(await fleet.waitFor("Version", "2"))
            }
        }

        @Test("the limits come from the environment's variables; a bad value is a configuration error")
        func limitsFromVariables() throws {
            let base = [
                "ENVIRONMENTS_ETCD_ENDPOINTS": "http://127.0.0.1:2379", "ENVIRONMENTS_ETCD_PREFIX": "/fleet/app/",
            ]
            let defaults = try #require(
                try EtcdConfiguration.resolve(endpoints: nil, prefix: nil, processEnvironment: base))
            #expect(defaults.limits == FleetLimits())
            let set = try #require(
                try EtcdConfiguration.resolve(
                    endpoints: nil, prefix: nil,
                    processEnvironment: base.merging(
                        [
                            "ENVIRONMENTS_ETCD_MAX_DOCUMENTS": "200", "ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES": "32M",
                            "ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES": "1048576",
                        ], uniquingKeysWith: { $1 })))
            #expect(set.limits.documents == 200)
            #expect(set.limits.documentBytes == 32 << 20)
            #expect(set.limits.totalBytes == 1 << 20)
            for bad in ["0", "-1", "lots", "12X", "9999999999"] {
                #expect {
                    try EtcdConfiguration.resolve(
                        endpoints: nil, prefix: nil,
                        processEnvironment: base.merging(
                            ["ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES": bad], uniquingKeysWith: { $1 }))
                } throws: { error in
                    "\(error)".contains("ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES")
                }
            }
        }
    }
#endif
