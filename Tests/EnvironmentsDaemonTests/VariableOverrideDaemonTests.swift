import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The example daemon started with `APP_` variables, as a unit's `Environment=` line or a
/// container sets them: they override the files, show as their source, and a bad one stops the
/// start with an error naming it.
@Suite("environment variables set keys of a running daemon", .blocking)
struct VariableOverrideDaemonTests {
    @Test("APP_ variables override the files, survive reloads, and envctl show names them")
    func variablesOverrideTheFiles() throws {
        let daemon = try DaemonHarness(
            plist: examplePlist(), extraEnvironment: ["APP_APIHost": "env.example.com", "APP_LISTENPORT": "9090"])
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        // APIBaseUrl interpolates APIHost: the variable's value.
        #expect(daemon.waitForLog("APIBaseUrl=https://env.example.com/v1 generation=1"), "\(daemon.log)")
        let socket = daemon.runtimeDirectory.appendingPathComponent("configuration.varlink").path
        let shown = try daemon.envctl(["show", "--socket", socket])
        #expect(shown.status == 0, "\(shown.output)")
        let lines = shown.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("APIHost ") && $0.hasSuffix("= env.example.com    # $APP_APIHost") })
        #expect(lines.contains { $0.hasPrefix("ListenPort ") && $0.hasSuffix("= 9090    # $APP_LISTENPORT") })
        let json = try daemon.envctl(["show", "--json", "--socket", socket])
        #expect(json.output.contains(#""layer" : "environmentVariable""#), "\(json.output)")

        // A reload applies the new files and the same variables over them.
        try daemon.replaceMainFile(with: examplePlist(apiHost: "edited.example.com", logLevel: "debug"))
        daemon.signal(SIGHUP)
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 2") })
        let after = try daemon.envctl(["get", "APIHost", "--socket", socket])
        #expect(after.output.trimmingCharacters(in: .whitespacesAndNewlines) == "env.example.com")
    }

    @Test("a variable that does not parse as its key's type stops the start, naming it")
    func aBadVariableStopsTheStart() throws {
        let daemon = try DaemonHarness(plist: examplePlist(), extraEnvironment: ["APP_ListenPort": "80x"])
        try daemon.start()
        let status = try #require(daemon.waitForExit())
        #expect(status != 0)
        #expect(daemon.log.contains("$APP_ListenPort '80x' is no integer as 'ListenPort' is"), "\(daemon.log)")
        #expect(daemon.log.contains("unset it"), "\(daemon.log)")
    }
}
