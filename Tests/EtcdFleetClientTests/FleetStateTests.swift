#if Fleet
    import Environments
    import EnvironmentsControl
    import EtcdFleetClient
    import Foundation
    import Testing

    /// The fleet's key layout, without etcd.
    @Suite struct FleetStateTests {
        @Test func onlyTheDocumentKeysCountAndDropInsFollowTheMainDocument() {
            let prefix = "/fleet/app/"
            let state = FleetState(
                prefix: prefix, revision: 9,
                keyValues: [
                    .init(key: prefix + "Environments.plist.d/20-b.plist", value: Data("b".utf8), modRevision: 7),
                    .init(key: prefix + "Environments.plist", value: Data("main".utf8), modRevision: 3),
                    .init(key: prefix + "Environments.plist.d/10-a.plist", value: Data("a".utf8), modRevision: 5),
                    .init(key: prefix + "Environments.plist.d/.hidden.plist", value: Data(), modRevision: 5),
                    .init(key: prefix + "Environments.plist.d/notes.txt", value: Data(), modRevision: 5),
                    .init(key: prefix + "Environments.plist.d/sub/x.plist", value: Data(), modRevision: 5),
                    .init(key: prefix + "other", value: Data(), modRevision: 5),
                ])
            #expect(
                state.documents.map(\.origin) == [
                    "etcd:/fleet/app/Environments.plist@3", "etcd:/fleet/app/Environments.plist.d/10-a.plist@5",
                    "etcd:/fleet/app/Environments.plist.d/20-b.plist@7",
                ])
        }

        @Test func changesApplyAndDeletionsRemove() {
            let prefix = "/fleet/app/"
            var state = FleetState(
                prefix: prefix, revision: 3,
                keyValues: [.init(key: prefix + "Environments.plist", value: Data("v1".utf8), modRevision: 3)])
            let added = state.apply(
                [.init(key: prefix + "Environments.plist.d/10-a.plist", value: Data("a".utf8), modRevision: 4)], at: 4)
            #expect(added)
            #expect(state.revision == 4)
            let unrelated = state.apply([.init(key: prefix + "unrelated", value: Data(), modRevision: 5)], at: 5)
            #expect(!unrelated)
            #expect(state.revision == 5)
            let deleted = state.apply([.init(key: prefix + "Environments.plist", value: nil, modRevision: 6)], at: 6)
            #expect(deleted)
            #expect(state.documents.map(\.origin) == ["etcd:/fleet/app/Environments.plist.d/10-a.plist@4"])
        }

        @Test func limitsNameTheFirstDocumentPastThem() {
            let prefix = "/fleet/app/"
            let main = prefix + "Environments.plist"
            let dropIn = prefix + "Environments.plist.d/10-a.plist"
            var state = FleetState(
                prefix: prefix, revision: 3,
                keyValues: [
                    .init(key: main, value: Data(count: 600), modRevision: 2),
                    .init(key: dropIn, value: Data(count: 500), modRevision: 3),
                ])
            var limits = FleetLimits()
            state.enforce(limits)
            #expect(state.violation == nil)

            limits.documents = 1
            state.enforce(limits)
            #expect(state.violation?.limit == "documents")
            #expect(state.violation?.key == dropIn)
            #expect(state.violation?.description.contains("ENVIRONMENTS_ETCD_MAX_DOCUMENTS") == true)

            limits = FleetLimits()
            limits.totalBytes = 1000
            state.enforce(limits)
            #expect(state.violation?.limit == "total bytes")
            #expect(state.violation?.key == dropIn)

            limits = FleetLimits()
            limits.documentBytes = 550
            state.enforce(limits)
            #expect(state.violation?.limit == "document bytes")
            #expect(state.violation?.key == main)
            #expect(state.violation?.unread == [main: 2])
            #expect(state.entries[main] == nil, "a document past its size is not kept")
            #expect(state.violation?.description.contains("ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES") == true)
        }

        @Test("hosts start on the member their machine id picks: the same every start, spread evenly over the members")
        func hostsSpreadOverTheMembers() {
            #expect(EtcdClient.firstEndpoint(among: 1, identity: "any") == 0)
            let identity = "0123456789abcdef0123456789abcdef"
            #expect(
                EtcdClient.firstEndpoint(among: 3, identity: identity)
                    == EtcdClient.firstEndpoint(among: 3, identity: identity))
            var counts = [0, 0, 0]
            for _ in 0..<3000 {
                let machineID = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
                counts[EtcdClient.firstEndpoint(among: 3, identity: machineID)] += 1
            }
            #expect(counts.allSatisfy { (850...1150).contains($0) }, "\(counts)")
            #expect(!EtcdClient.hostIdentity.isEmpty)
        }

        @Test(
            "a host's rejection in its status: where and what kind of error, never a message, whatever the error quotes; cut within 1 KiB"
        )
        func rejectionsCarryNoValue() throws {
            let value = "postgres://app:hunter2@db.cluster.example/app"
            // Every kind of error, each quoting the value in its message and its hint.
            let codes: [EnvironmentError.Code] = [
                .typeMismatch, .validationFailed, .malformedFile, .invalidInterpolation, .missingCredential,
                .unresolvedReference,
            ]
            for code in codes {
                let error = EnvironmentError(
                    code, "'DatabaseURL' is \(value): not allowed", key: "DatabaseURL",
                    file: "/etc/app/Environments.plist", line: 12, hint: "replace \(value)")
                let rejection = FleetRejection(error)
                let change = FleetHostStatus.Change(
                    outcome: .rejected, revision: 7, fingerprint: "f", rejection: rejection, at: Date())
                let status = FleetHostStatus(
                    host: "web-1", revision: 6, fingerprint: "e", generation: 3, environment: "Production",
                    last: change,
                    version: nil, library: "0", renewed: Date(), ttl: 30, refresh: 60)
                let written = String(decoding: status.encoded(), as: UTF8.self)
                #expect(!written.contains("hunter2"), "\(code): \(written)")
                #expect(!written.contains("not allowed"), "\(code): \(written)")
                #expect(change.error?.hasPrefix("/etc/app/Environments.plist:12: 'DatabaseURL': ") == true)
            }
            #expect(
                FleetRejection(EnvironmentError(.typeMismatch, "'Port' is 99999", key: "Port")).description
                    == "'Port': type mismatch (the host's journal has the whole error: journalctl -u UNIT)")
            #expect(FleetRejection.abandoned.description == "abandoned: the service was stopping")
            // A long file name: cut at a character with "…", within 1 KiB.
            let long = FleetRejection(
                EnvironmentError(.malformedFile, "x", file: "/etc/app/" + String(repeating: "é", count: 2000)))
            let cut = FleetHostStatus.Change(
                outcome: .rejected, revision: 1, fingerprint: "f", rejection: long, at: Date())
            let error = try #require(cut.error)
            #expect(error.hasSuffix("…") && error.utf8.count <= FleetHostStatus.maximumErrorBytes)
        }

        @Test(
            "a host in a staged publish's stage runs the candidate when it is whole; others, and an incomplete one, the fleet's"
        )
        func effectiveDocuments() throws {
            let prefix = "/fleet/app/"
            let main = prefix + "Environments.plist"
            var state = FleetState(
                prefix: prefix, revision: 5,
                keyValues: [EtcdKeyValue(key: main, value: Data("old".utf8), modRevision: 3)])
            var candidate = state
            candidate.entries[main] = .init(value: Data("new".utf8), modRevision: 6)
            var record = FleetRollout(
                id: "t", base: 5, baseFingerprint: state.fingerprint, fingerprint: candidate.fingerprint,
                documents: ["Environments.plist"], steps: [.hosts(["in-1"])], settle: 1, startedBy: "t", started: Date()
            )
            record.widen(to: 0, reporting: ["in-1", "out-1"])
            state.entries[FleetRollout.key(prefix: prefix)] = .init(value: try record.encoded(), modRevision: 6)
            // The record alone: the candidate is not whole, everyone keeps the fleet's documents.
            #expect(state.effective(forHost: "in-1", limits: FleetLimits()).entries[main]?.value == Data("old".utf8))
            state.entries[FleetRollout.candidateKey(for: main, prefix: prefix)] = .init(
                value: Data("new".utf8), modRevision: 6)
            #expect(state.effective(forHost: "in-1", limits: FleetLimits()).entries[main]?.value == Data("new".utf8))
            #expect(state.effective(forHost: "in-1", limits: FleetLimits()).fingerprint == record.fingerprint)
            #expect(state.effective(forHost: "out-1", limits: FleetLimits()).entries[main]?.value == Data("old".utf8))
            #expect(state.effective(forHost: nil, limits: FleetLimits()).entries.count == 1)
            // The staged keys are not documents: the fleet's own fingerprint and revision ignore them.
            #expect(state.documents.count == 1 && state.configurationRevision == 3)
            // A candidate changed behind the record (another fingerprint): not run.
            state.entries[FleetRollout.candidateKey(for: main, prefix: prefix)] = .init(
                value: Data("tampered".utf8), modRevision: 7)
            #expect(state.effective(forHost: "in-1", limits: FleetLimits()).entries[main]?.value == Data("old".utf8))
        }
    }
#endif
