#if Fleet
    import Environments
    import EtcdFleetClient
    import Foundation
    import TestSupport
    import Testing

    /// A fleet host's status key as a surface of a reload, held to every field of the report as
    /// `ReloadReportSurfaceTests` holds the daemon's own surfaces: a field added to
    /// `ReloadReport` fails here until the status shows it or lists it below, with why.
    @Suite("a fleet host's status shows each field of a reload, or says why not")
    struct FleetStatusSurfaceTests {
        static let notShown: [String: String] = [
            "revision":
                "the status names the revision of the documents the host built from (the fleet layer's, which the source gave); the report's says only that it was a fleet change",
            "instance": "the host id carries it (web-1@INSTANCE)",
            "callerUID": "a fleet change has no caller",
            "callerUnit": "as callerUID",
            "changedKeys": "the status is at most 4 KiB, read by every host; the host's journal lists them",
            "changedKeyCount": "as changedKeys",
            "previousValues": "values never leave the host (FleetRejection)",
            "values": "as previousValues",
            "valuesOmitted": "as previousValues",
            "startedMonotonicMicroseconds": "a monotonic time means nothing on another host",
            "finishedMonotonicMicroseconds": "as startedMonotonicMicroseconds",
            "finished": "`at` is when the host judged the change, `renewed` when it wrote the value",
            "pid": "the host id names the daemon",
        ]

        /// The status value after `report`, a change of the source `trigger-t1` (the samples').
        static func render(_ report: ReloadReport) -> String {
            let at = Date(timeIntervalSince1970: 1_790_000_000)
            let last = FleetHostStatus.Change(report, of: "trigger-t1", revision: 7, fingerprint: "f", at: at)
            let status = FleetHostStatus(
                after: report, host: "web-1", running: (7, "f"), last: last, version: "1.0", renewed: at, ttl: 30,
                refresh: 60)
            return String(decoding: status.encoded(), as: UTF8.self)
        }

        @Test("the status shows every field it does not list as left out, and none that it lists")
        func statusShowsItsFields() throws {
            let shown = ReloadReportSamples.shownFields(by: Self.render)
            for name in ReloadReportSamples.fieldNames {
                if let why = Self.notShown[name] {
                    #expect(!shown.contains(name), "the fleet's status shows \(name), listed as left out (\(why))")
                } else {
                    #expect(
                        shown.contains(name), "the fleet's status does not show \(name): show it, or list it with why")
                }
            }
        }

        @Test("a status value read back writes the same value")
        func readBack() throws {
            for outcome in ReloadReportSamples.outcomes {
                var report = ReloadReportSamples.report(outcome)
                for change in [{ (_: inout ReloadReport) in }] + Array(ReloadReportSamples.changes.values) {
                    change(&report)
                    let text = Self.render(report)
                    let status = try #require(FleetHostStatus.decode(Data(text.utf8)))
                    #expect(String(decoding: status.encoded(), as: UTF8.self) == text)
                }
            }
        }
    }
#endif
