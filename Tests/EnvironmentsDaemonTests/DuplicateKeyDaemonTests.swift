import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A key written twice in one dictionary, against the running daemon and envctl: the daemon
/// runs on the last copy and says so (its log, or the journal with its own MESSAGE_ID),
/// `envctl check` and `show` print the warning with both lines, and `check --strict` fails.
@Suite("a key written twice, reported by the daemon and envctl", .blocking)
struct DuplicateKeyDaemonTests {
    @Test("the daemon, envctl check and envctl show report a duplicate; --strict fails")
    func duplicates() throws {
        let plist = examplePlist().replacingOccurrences(
            of: "<key>APIHost</key><string>staging.example.com</string>",
            with: "<key>APIHost</key><string>first.example.com</string>\n"
                + "        <key>APIHost</key><string>staging.example.com</string>")
        let daemon = try DaemonHarness(plist: plist)
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let file = daemon.mainFile.path
        #expect(daemon.waitForLog("Configuration warning: \(file):15: 'Staging' > 'APIHost'"), "\(daemon.log)")
        #expect(daemon.log.contains("a8318aaf953f4a6db5068065eea0b110"), "\(daemon.log)")
        let socket = daemon.runtimeDirectory.appendingPathComponent("configuration.varlink").path

        let host = try daemon.envctl(["get", "APIHost", "--socket", socket])
        #expect(host.output == "staging.example.com\n")
        for arguments in [
            ["--socket", socket], ["--config-dir", daemon.configDirectory.path, "--environment", "Staging"],
        ] {
            let check = try daemon.envctl(["check"] + arguments)
            #expect(check.status == 0, "\(check.output)")
            #expect(
                check.output.contains("warning: \(file):15: 'Staging' > 'APIHost' is written twice"),
                "\(check.output)")
            #expect(check.output.contains("on line 14 and again on line 15"), "\(check.output)")
            let strict = try daemon.envctl(["check", "--strict"] + arguments)
            #expect(strict.status != 0, "\(strict.output)")
            let show = try daemon.envctl(["show"] + arguments)
            #expect(show.output.contains("# warning: \(file):15:"), "\(show.output)")
            let json = try daemon.envctl(["show", "--json"] + arguments)
            #expect(json.output.contains(#""warnings" : ["#), "\(json.output)")
        }
    }
}
