import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import Testing

/// The state file is read by other versions (`envctl`, scripts, the daemon's reload command):
/// one an earlier version wrote still reads, and writes back to the same bytes.
@Suite("state files an earlier version wrote")
struct StateFileFormTests {
    /// A state file as 0.3.0's daemon wrote it after a reload that came to `outcome`.
    static func oldStateFile(outcome: String) -> String {
        let error =
            outcome == "rejected"
            ? [
                #"    "error" : "Environments.plist:4: not a property list","#,
                #"    "errorCode" : "malformedFile","#,
                #"    "errorFile" : "/etc/app/Environments.plist","#,
                #"    "errorLine" : 4,"#,
                #"    "errorMessage" : "not a property list","#,
            ].map { $0 + "\n" }.joined() : ""
        return """
            {
              "applicationName" : "app",
              "bootID" : "00000000-0000-4000-8000-000000000000",
              "environment" : "Production",
              "files" : [
                "/etc/app/Environments.plist"
              ],
              "generation" : 2,
              "lastReload" : {
                "changedKeys" : [
                  "LogLevel"
                ],
            ERROR
                "finishedMonotonicMicroseconds" : 2000,
                "generation" : 2,
                "outcome" : "\(outcome)",
                "startedMonotonicMicroseconds" : 1000,
                "trigger" : "signal"
              },
              "pendingRestart" : [
                "Port"
              ],
              "pid" : 4242,
              "processStartTime" : 123456,
              "resolvedDirectory" : "/etc/app",
              "runningValues" : {
                "Port" : "8080"
              }
            }

            """.replacingOccurrences(of: "ERROR\n", with: error)
    }

    @Test(
        "each outcome reads back, and the file is written again byte for byte",
        arguments: [
            ("applied", ReloadReport.Outcome.applied), ("unchanged", .unchanged), ("rejected", .rejected),
        ])
    func oldStateFiles(_ outcome: String, _ expected: ReloadReport.Outcome) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "state-file-form-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = Self.oldStateFile(outcome: outcome)
        let path = directory.appendingPathComponent("environment-state.json").path
        try Data(old.utf8).write(to: URL(fileURLWithPath: path))

        let state = try ReloadState.read(from: path)
        #expect(state.lastReload?.outcome == expected)
        #expect(state.lastReload?.error?.line == (expected == .rejected ? 4 : nil))

        let again = directory.appendingPathComponent("again.json").path
        try state.write(to: again)
        let written = String(decoding: try Data(contentsOf: URL(fileURLWithPath: again)), as: UTF8.self)
        #expect(written == old)
    }
}
