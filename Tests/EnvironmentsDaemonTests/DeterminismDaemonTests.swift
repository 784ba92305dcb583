import EnvironmentsDaemon
import Foundation
import TestSupport
import Testing

/// The same files give the same answer in every process: each envctl run below is a fresh
/// process with its own random hash seed (`SWIFT_DETERMINISTIC_HASHING` is taken out of its
/// environment), and every run must print the same. And a daemon lists the values built from a
/// waiting restart-only key as waiting too.
@Suite(.blocking) struct DeterminismDaemonTests {
    /// How many fresh processes answer each question.
    static let runs = 6

    private static let layered = plistDocument(
        """
            <key>Common</key>
            <dict>
                <key>Database</key>
                <dict>
                    <key>Host</key><string>common-nested</string>
                    <key>Password</key><string>common-nested-secret</string>
                    <key>Port</key><integer>5432</integer>
                </dict>
                <key>Cache.Host</key><string>common-dotted</string>
            </dict>
            <key>Staging</key>
            <dict>
                <key>Database.Host</key><string>staging-dotted</string>
                <key>Database.Password</key><string>staging-dotted-secret</string>
                <key>Cache</key>
                <dict><key>Host</key><string>staging-nested</string></dict>
            </dict>
            <key>Secrets</key>
            <array><string>Database.Password</string></array>
        """)

    /// Runs envctl `runs` times in fresh processes, each with its own hash seed; returns
    /// their statuses and outputs.
    private static func answers(_ arguments: [String]) throws -> [FinishedProcess] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["SWIFT_DETERMINISTIC_HASHING", "APP_ENVIRONMENT", "APP_INSTANCE", "CONFIGURATION_DIRECTORY"] {
            environment[key] = nil
        }
        return try (0..<runs).map { _ in try runToEnd(BuiltProducts.envctl, arguments, environment: environment) }
    }

    @Test("get and show answer the same in every process: the higher layer wins, each key listed once")
    func freshProcesses() throws {
        let directory = try ExampleConfigurationDirectory()
        try Self.layered.write(toFile: directory.path + "/Environments.plist", atomically: true, encoding: .utf8)
        let location = ["--config-dir", directory.path, "--environment", "Staging"]

        for (key, expected) in [("Database.Host", "staging-dotted"), ("Cache.Host", "staging-nested")] {
            let runs = try Self.answers(["get", key] + location)
            for run in runs {
                #expect(run.status == 0, "\(run.output)")
                #expect(run.output == expected + "\n", "\(key): \(runs.map(\.output))")
            }
        }
        let revealed = try Self.answers(["get", "Database.Password", "--show-secrets"] + location)
        #expect(revealed.allSatisfy { $0.output == "staging-dotted-secret\n" }, "\(revealed.map(\.output))")

        let shows = try Self.answers(["show"] + location)
        let first = try #require(shows.first)
        #expect(first.status == 0, "\(first.output)")
        #expect(shows.allSatisfy { $0.output == first.output }, "\(shows.map(\.output))")
        let lines = first.output.split(separator: "\n")
        for key in ["Database.Host", "Database.Password", "Database.Port", "Cache.Host"] {
            #expect(lines.filter { $0.hasPrefix(key + " ") }.count == 1, "\(key) in \(first.output)")
        }
        #expect(!first.output.contains("secret"), "\(first.output)")
    }

    @Test("a path set both ways in one section: every process rejects it with the same message")
    func ambiguityIsRejectedTheSameWay() throws {
        let directory = try ExampleConfigurationDirectory()
        let ambiguous = Self.layered.replacingOccurrences(
            of: "<key>Cache.Host</key>", with: "<key>Database.Host</key><string>again</string><key>Other</key>")
        try ambiguous.write(toFile: directory.path + "/Environments.plist", atomically: true, encoding: .utf8)
        let runs = try Self.answers(["check", "--config-dir", directory.path])
        let first = try #require(runs.first)
        #expect(first.status != 0)
        #expect(first.output.contains("'Database.Host' is set twice in Common in this file"), "\(first.output)")
        #expect(first.output.contains("(line 8)") && first.output.contains("(line 12)"), "\(first.output)")
        #expect(runs.allSatisfy { $0.output == first.output && $0.status == first.status }, "\(runs.map(\.output))")
    }

    @Test("envctl show lists a value built from a waiting restart-only key as waiting, with its next value")
    func derivedKeyIsPendingInShow() throws {
        let plist = examplePlist(listenPort: 8080)
        func withPublicURL(_ plist: String) -> String {
            plist.replacingOccurrences(
                of: "<key>HeartbeatInterval</key>",
                with: "<key>PublicURL</key><string>http://localhost:${ListenPort}/</string><key>HeartbeatInterval</key>"
            )
        }
        let daemon = try DaemonHarness(plist: withPublicURL(plist))
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        // The new port, and ListenPort taken out of RestartRequired in the same edit.
        try daemon.replaceMainFile(
            with: withPublicURL(examplePlist(listenPort: 9090)).replacingOccurrences(
                of: "<array><string>ListenPort</string></array>", with: "<array/>"))
        #expect(daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 2") } != nil)
        let state = try ReloadState.read(from: daemon.stateFile)
        #expect(state.pendingRestart.sorted() == ["ListenPort", "PublicURL"])

        let show = try daemon.envctl(["show", "--pid", String(daemon.pid)])
        #expect(show.status == 0, "\(show.output)")
        let lines = show.output.split(separator: "\n")
        let port = lines.first { $0.hasPrefix("ListenPort ") }
        #expect(port?.contains("= 8080") == true, "\(show.output)")
        #expect(port?.contains("(pending restart: 9090 after restart)") == true, "\(show.output)")
        let url = lines.first { $0.hasPrefix("PublicURL ") }
        #expect(url?.contains("= http://localhost:8080/") == true, "\(show.output)")
        #expect(url?.contains("(pending restart: http://localhost:9090/ after restart)") == true, "\(show.output)")
        let get = try daemon.envctl(["get", "PublicURL", "--pid", String(daemon.pid)])
        #expect(get.output == "http://localhost:8080/\n", "\(get.output)")
    }
}
