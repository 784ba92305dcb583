import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A running daemon against keys past the bounds of a key path (issue 31.1): a deep dotted key
/// in a drop-in, the same file as a `Check` candidate (what `envctl edit` sends), a variable
/// of too many levels. The daemon keeps running on its last good configuration, and every
/// refusal names the key, the file and the line.
@Suite("key paths past their bounds, against the running daemon", .blocking)
struct KeyPathDaemonTests {
    /// A drop-in whose Staging section holds one dotted key of `components` components.
    static func deepDropIn(_ components: Int) -> String {
        let key = Array(repeating: "Level", count: components).joined(separator: ".")
        return plistDocument(
            """
                <key>Staging</key>
                <dict>
                    <key>\(key)</key><string>x</string>
                    <key>APIHost</key><string>deep.example.com</string>
                </dict>
            """)
    }

    @Test("a deep dotted key is a rejected reload and a refused Check candidate; the daemon keeps running")
    func deepKey() async throws {
        try await onThread {
            let daemon = try DaemonHarness(plist: examplePlist())
            try daemon.start()
            _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
            let socket = daemon.runtimeDirectory.appendingPathComponent("configuration.varlink").path

            // The same file as a Check candidate: `envctl edit` sends it before installing anything.
            let candidate = daemon.root.appendingPathComponent("deep.plist")
            try Self.deepDropIn(5_000).write(to: candidate, atomically: true, encoding: .utf8)
            let edit = try daemon.envctl(
                ["edit", "--drop-in", "10-deep", "--socket", socket, "--config-dir", daemon.configDirectory.path],
                extraEnvironment: ["EDITOR": "cp -- \(candidate.path)"])
            #expect(edit.status != 0, "\(edit.output)")
            #expect(edit.output.contains("is not a valid key path"), "\(edit.output)")
            #expect(edit.output.contains("10-deep.plist:6"), "\(edit.output)")
            #expect(kill(daemon.pid, 0) == 0, "the daemon is still running")
            let dropIns = daemon.configDirectory.appendingPathComponent("Environments.plist.d")
            #expect(!FileManager.default.fileExists(atPath: dropIns.appendingPathComponent("10-deep.plist").path))

            // Written directly, then reloaded: rejected, and the last good values stay.
            try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
            try Self.deepDropIn(5_000).write(
                to: dropIns.appendingPathComponent("10-deep.plist"), atomically: true, encoding: .utf8)
            let reload = try daemon.envctl(["reload", "--socket", socket])
            #expect(reload.status != 0, "\(reload.output)")
            #expect(reload.output.contains("10-deep.plist"), "\(reload.output)")
            #expect(reload.output.contains("is not a valid key path"), "\(reload.output)")
            #expect(kill(daemon.pid, 0) == 0, "the daemon is still running")
            let host = try daemon.envctl(["get", "APIHost", "--socket", socket])
            #expect(host.output == "staging.example.com\n", "\(host.output)")

            // At the bound, it applies.
            try Self.deepDropIn(64).write(
                to: dropIns.appendingPathComponent("10-deep.plist"), atomically: true, encoding: .utf8)
            let good = try daemon.envctl(["reload", "--socket", socket])
            #expect(good.status == 0, "\(good.output)")
            let applied = try daemon.envctl(["get", "APIHost", "--socket", socket])
            #expect(applied.output == "deep.example.com\n", "\(applied.output)")
        }
    }

    @Test("a variable of too many levels stops the start with an error naming it; envctl says so too")
    func deepVariable() async throws {
        try await onThread {
            let name = "APP_" + Array(repeating: "L", count: 10_000).joined(separator: "__")
            let daemon = try DaemonHarness(plist: examplePlist(), extraEnvironment: [name: "1"])
            try daemon.start()
            let status = try #require(daemon.waitForExit())
            #expect(status != 0)
            #expect(daemon.log.contains("names no key"), "\(daemon.log.prefix(2000))")
            #expect(daemon.log.utf8.count < 64 << 10, "the name is shown shortened")
            let check = try daemon.envctl(["check", "--config-dir", daemon.configDirectory.path])
            #expect(check.status != 0)
            #expect(check.output.contains("names no key"), "\(check.output.prefix(2000))")
        }
    }
}
