import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import Logging
import SystemdSupport
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A value derived from a secret that fails validation is reported by key and reason, never by
/// value: in `envctl check` and `envctl reload`, on the daemon's stderr, in its journal entries,
/// in `STATUS=` and in the state file. And every file the daemon writes in its runtime
/// directory is its user's alone, whatever the umask.
@Suite("secrets stay out of rejections; runtime files are private", .blocking)
struct SecretLeakTests {
    static let password = "pw-Correct-Horse-77"
    static let credential = "cred-Battery-Staple-99"

    /// The example's configuration with a secret `Database.Password` and the given `LogLevel`
    /// and `APIBaseUrl`.
    static func plist(logLevel: String = "info", apiBaseURL: String = "https://${APIHost}/v1") -> String {
        examplePlist(
            logLevel: logLevel, apiBaseURL: apiBaseURL,
            moreCommon: """
                <key>Database</key><dict><key>Password</key><string>\(password)</string></dict>
                <key>Token</key><string>${credential:db-password}</string>
                """,
            secrets: ["Database.Password"])
    }

    /// Configurations whose rejection involves a secret: by the `LogLevel` check and by the
    /// example daemon's declaration (`LogLevel` one of swift-log's levels, `APIBaseUrl` an http
    /// or https URL). `mentions` is what the `LogLevel` check says (a daemon without a
    /// declaration), `declared` what the example daemon's declaration says.
    static let rejectedConfigurations: [(what: String, plist: String, mentions: String, declared: String)] = [
        ("LogLevel from a secret key", plist(logLevel: "${Database.Password}"), "'LogLevel' is <redacted>", logLevel),
        (
            "LogLevel from a credential", plist(logLevel: "${credential:db-password}"), "'LogLevel' is <redacted>",
            logLevel
        ),
        ("LogLevel from a secret, in part", plist(logLevel: "x${Token}x"), "'LogLevel' is <redacted>", logLevel),
        ("APIBaseUrl from a credential", plist(apiBaseURL: "${credential:db-password}"), "", notURL),
        ("APIBaseUrl from a secret key", plist(apiBaseURL: "ftp://${Database.Password}"), "", baseURL),
    ]
    static let logLevel = "'LogLevel' is not an allowed value, expected one of"
    static let notURL = "'APIBaseUrl' is a string, expected a URL ("
    static let baseURL = "'APIBaseUrl' is not a URL with the scheme http or https"

    static func expectNoSecret(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for secret in [password, credential, "Correct-Horse", "Battery-Staple"] {
            #expect(!text.contains(secret), "\(what) shows a secret: \(text)", sourceLocation: sourceLocation)
        }
    }

    /// Every entry of the runtime directory but the control socket is a regular file with mode
    /// 0600 (temporary files included, were one left).
    static func expectPrivateFiles(in directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.contains("environment-state.json"), sourceLocation: sourceLocation)
        for name in names {
            var status = stat()
            #expect(lstat(directory.appendingPathComponent(name).path, &status) == 0)
            if status.st_mode & S_IFMT == S_IFSOCK { continue }
            #expect(status.st_mode & S_IFMT == S_IFREG, "\(name)", sourceLocation: sourceLocation)
            #expect(
                status.st_mode & 0o7777 == 0o600, "\(name) has mode \(String(status.st_mode & 0o7777, radix: 8))",
                sourceLocation: sourceLocation)
        }
    }

    @Test("the real daemon under umask 000: check, reload, stderr, STATUS= and the state file never show the secret")
    func daemonNeverShowsTheSecret() throws {
        let credentials = NSTemporaryDirectory() + "envd-cred-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: credentials) }
        try (Self.credential + "\n").write(toFile: credentials + "/db-password", atomically: true, encoding: .utf8)

        let daemon = try DaemonHarness(plist: Self.plist(), extraEnvironment: ["CREDENTIALS_DIRECTORY": credentials])
        try daemon.start(umask: "000")
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        try Self.expectPrivateFiles(in: daemon.runtimeDirectory)

        let pid = String(daemon.pid)
        for (what, plist, _, mentions) in Self.rejectedConfigurations {
            try daemon.replaceMainFile(with: plist)
            // From the running daemon (its own validation), and from the files as envctl reads them.
            let checked = try daemon.envctl(["check", "--pid", pid])
            #expect(checked.status == 1, "\(what): \(checked.output)")
            #expect(checked.output.contains(mentions), "\(what): \(checked.output)")
            Self.expectNoSecret(checked.output, "\(what): envctl check --pid")
            let fromFiles = try daemon.envctl([
                "check", "--config-dir", daemon.configDirectory.path, "--environment", "Staging",
            ])
            Self.expectNoSecret(fromFiles.output, "\(what): envctl check --config-dir")

            let reloaded = try daemon.envctl(["reload", "--pid", pid])
            #expect(reloaded.status == 1, "\(what): \(reloaded.output)")
            #expect(reloaded.output.contains(mentions), "\(what): \(reloaded.output)")
            Self.expectNoSecret(reloaded.output, "\(what): envctl reload")

            let shown = try daemon.envctl(["show", "--pid", pid])
            #expect(shown.output.contains("rejected"), "\(what): \(shown.output)")
            Self.expectNoSecret(shown.output, "\(what): envctl show")
            let json = try daemon.envctl(["show", "--json", "--pid", pid])
            Self.expectNoSecret(json.output, "\(what): envctl show --json")

            let state = try String(contentsOfFile: daemon.stateFile, encoding: .utf8)
            #expect(state.contains(mentions), "\(what): \(state)")
            Self.expectNoSecret(state, "\(what): the state file")
        }
        #expect(daemon.waitForLog(Self.baseURL))
        Self.expectNoSecret(daemon.log, "the daemon's stderr")
        while let datagram = daemon.notify.receive(timeout: .milliseconds(200)) { daemon.datagrams.append(datagram) }
        #expect(daemon.datagrams.contains { $0.contains("reload rejected") })
        Self.expectNoSecret(daemon.datagrams.joined(separator: "\n"), "STATUS=")
        try Self.expectPrivateFiles(in: daemon.runtimeDirectory)
        #expect(daemon.process?.isRunning == true)
    }

    @Test("journald's path: the rejection's log entry and journal entry name the key, not the secret")
    func journalEntries() async throws {
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "envj-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let journal = try NotifySocket(path: root.appendingPathComponent("journal.sock").path)
        try (Self.credential + "\n").write(
            to: root.appendingPathComponent("db-password"), atomically: true, encoding: .utf8)
        let mainFile = root.appendingPathComponent("Environments.plist")
        try Self.plist().write(to: mainFile, atomically: true, encoding: .utf8)
        let environment = try Environment(
            options: EnvironmentOptions(
                applicationName: "test", environment: "Staging", configDirectory: root.path,
                processEnvironment: ["CREDENTIALS_DIRECTORY": root.path]))
        let output = JournalLogHandler.Output.socket(journal.path)
        let logger = Logger(label: "secrets") { label in
            JournalLogHandler(label: label, levelControl: LogLevelControl(level: .trace), output: output)
        }
        let reloader = ConfigurationReloader(
            environment: environment,
            reporter: ConfigurationReporter(output: output, identifier: "secret-test", logger: logger),
            stateFile: root.appendingPathComponent("state.json").path, levelControl: nil, logger: logger)
        await reloader.start()
        var datagrams: [String] = []
        while let datagram = journal.receive(timeout: .milliseconds(200)) { datagrams.append(datagram) }
        for (what, plist, mentions, _) in Self.rejectedConfigurations.prefix(3) {
            try plist.write(to: mainFile, atomically: true, encoding: .utf8)
            let record = await reloader.reload(trigger: .signal)
            #expect(record.outcome == .rejected, "\(what)")
            var entries: [String] = []
            while let datagram = journal.receive(timeout: .milliseconds(500)) { entries.append(datagram) }
            // The log line and the MESSAGE_ID entry, both with the key.
            #expect(entries.filter { $0.contains(mentions) }.count >= 2, "\(what): \(entries)")
            #expect(entries.contains { $0.contains("CONFIG_KEY=LogLevel") }, "\(what): \(entries)")
            datagrams += entries
        }
        Self.expectNoSecret(datagrams.joined(separator: "\n"), "the journal entries")
        let state = try String(contentsOf: root.appendingPathComponent("state.json"), encoding: .utf8)
        Self.expectNoSecret(state, "the state file")
    }
}
