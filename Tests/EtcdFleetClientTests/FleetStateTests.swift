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
}
