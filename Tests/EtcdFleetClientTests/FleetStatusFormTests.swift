#if Fleet
    import Environments
    import EnvironmentsControl
    import EtcdFleetClient
    import Foundation
    import Testing

    /// A fleet's status keys are read by the other hosts' and `envctl fleet status`'s versions: the
    /// values an earlier version wrote still decode, and encode back to the same bytes.
    @Suite("fleet status values an earlier version wrote")
    struct FleetStatusFormTests {
        /// An earlier version's value, for each outcome of the last fleet change.
        static let oldValues: [(String, ReloadReport.Outcome)] = [
            ("applied", .applied), ("unchanged", .unchanged), ("pending-restart", .applied),
            ("rejected", .rejected),
        ].map { outcome, expected in
            let error =
                outcome == "rejected"
                ? #""error":"'Port': type mismatch (the host's journal has the whole error: journalctl -u UNIT)","# : ""
            return (
                #"{"environment":"Production","fingerprint":"e","generation":3,"host":"web-1","last":{"at":"2026-11-28T22:00:00Z","#
                    + error
                    + #""fingerprint":"f","outcome":"\#(outcome)","revision":7},"library":"0.3.0","refresh":60,"#
                    + #""renewed":"2026-11-28T22:00:05Z","revision":7,"schema":1,"ttl":30}"#,
                expected
            )
        }

        @Test("each outcome decodes to its case and encodes back to the same bytes")
        func oldValuesRoundTrip() throws {
            for (old, expected) in Self.oldValues {
                let status = try #require(FleetHostStatus.decode(Data(old.utf8)), "\(old)")
                #expect(status.last?.outcome == expected)
                #expect(status.last?.waitsForRestart == old.contains("pending-restart"))
                #expect(String(decoding: status.encoded(), as: UTF8.self) == old)
            }
        }

        @Test("a change that was applied with keys waiting for a restart says pending-restart")
        func pendingRestartOnTheWire() throws {
            let report = ReloadReport(
                outcome: .applied, trigger: "fleet", revision: 7, generation: 3, environment: "Production",
                pendingRestart: ["Port"])
            let change = try #require(
                FleetHostStatus.Change(
                    report, of: "fleet", revision: 7, fingerprint: "f", at: Date(timeIntervalSince1970: 0)))
            let status = FleetHostStatus(
                host: "web-1", revision: 7, fingerprint: "f", generation: 3, environment: "Production", last: change,
                version: nil, library: "0", renewed: Date(timeIntervalSince1970: 0), ttl: 30, refresh: 60)
            #expect(String(decoding: status.encoded(), as: UTF8.self).contains(#""outcome":"pending-restart""#))
        }
    }
#endif
