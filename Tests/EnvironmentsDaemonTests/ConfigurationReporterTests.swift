import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import Logging
import SystemdSupport
import TestSupport
import Testing

/// The configuration entries as journald receives them: native-protocol datagrams on a real
/// unix socket.
@Suite("configuration entries in the journal", .blocking)
struct ConfigurationReporterTests {
    /// A temporary directory with a journal socket and an Environments.plist.
    final class Fixture: @unchecked Sendable {
        let root: URL
        let journal: NotifySocket
        init() throws {
            root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                "envj-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            journal = try NotifySocket(path: root.appendingPathComponent("journal.sock").path)
        }
        var mainFile: URL { root.appendingPathComponent("Environments.plist") }
        var stateFile: String { root.appendingPathComponent("state.json").path }
        var reporter: ConfigurationReporter {
            ConfigurationReporter(
                output: .socket(journal.path), identifier: "reporter-test", logger: Logger(label: "test"))
        }
        func environment() throws -> Environment {
            try Environment(
                options: EnvironmentOptions(
                    applicationName: "test", environment: "Staging", configDirectory: root.path,
                    processEnvironment: ["CREDENTIALS_DIRECTORY": root.path]))
        }
        /// The next entry's fields, in order (names may repeat).
        func nextEntry() throws -> [(String, String)] {
            let datagram = try #require(journal.receive(timeout: .seconds(10)))
            return datagram.split(separator: "\n").map { line in
                let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }
        }
        deinit { try? FileManager.default.removeItem(at: root) }
    }

    static func plist(host: String, port: Int = 8080) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>Common</key><dict>
            <key>APIBaseUrl</key><string>https://${Host}/v1</string>
            <key>Password</key><string>${credential:password}</string>
            <key>ListenPort</key><integer>\(port)</integer>
        </dict>
        <key>Staging</key><dict><key>Host</key><string>\(host)</string></dict>
        <key>RestartRequired</key><array><string>ListenPort</string></array>
        </dict></plist>
        """
    }

    @Test("the applied entry carries MESSAGE_ID, environment, generation, files and every setting, secrets redacted")
    func appliedEntry() async throws {
        let fixture = try Fixture()
        try "hunter2-secret\n".write(
            to: fixture.root.appendingPathComponent("password"), atomically: true, encoding: .utf8)
        try Self.plist(host: "one.example.com").write(to: fixture.mainFile, atomically: true, encoding: .utf8)
        let environment = try fixture.environment()
        let reloader = ConfigurationReloader(
            environment: environment, reporter: fixture.reporter, stateFile: nil, levelControl: nil,
            logger: Logger(label: "test"))
        await reloader.start()
        let fields = try fixture.nextEntry()
        func values(_ name: String) -> [String] { fields.filter { $0.0 == name }.map(\.1) }
        #expect(values("MESSAGE_ID") == [ConfigurationMessageID.applied])
        #expect(values("PRIORITY") == ["6"])
        #expect(values("SYSLOG_IDENTIFIER") == ["reporter-test"])
        #expect(values("CONFIG_ENVIRONMENT") == ["Staging"])
        #expect(values("CONFIG_GENERATION") == ["1"])
        #expect(values("CONFIG_TRIGGER") == ["start"])
        #expect(values("CONFIG_CHANGED_KEY").isEmpty)
        #expect(values("CONFIG_SOURCE_FILE") == [fixture.mainFile.path])
        #expect(
            values("CONFIG_SETTING") == [
                "APIBaseUrl=https://one.example.com/v1", "Host=one.example.com", "ListenPort=8080",
                "Password=<redacted>",
            ])
        #expect(values("CONFIG_SETTING_SOURCE").contains("Host=\(fixture.mainFile.path) [Staging]"))
        // The plain journal (`journalctl -u NAME`) shows a small configuration whole.
        #expect(
            values("MESSAGE") == [
                "Configuration loaded: environment Staging, generation 1, 4 settings: "
                    + "APIBaseUrl=https://one.example.com/v1, Host=one.example.com, ListenPort=8080, Password=<redacted>"
            ])
        #expect(!fields.contains { $0.1.contains("hunter2") })
    }

    @Test(
        "a reload: applied with changed keys, their values before and who asked; rejected with file and line; unchanged; pending restart; state file and history follow"
    )
    func reloadPipeline() async throws {
        let fixture = try Fixture()
        try "pw".write(to: fixture.root.appendingPathComponent("password"), atomically: true, encoding: .utf8)
        try Self.plist(host: "one.example.com").write(to: fixture.mainFile, atomically: true, encoding: .utf8)
        let environment = try fixture.environment()
        let reloader = ConfigurationReloader(
            environment: environment, reporter: fixture.reporter, stateFile: fixture.stateFile, levelControl: nil,
            logger: Logger(label: "test"))
        await reloader.start()
        _ = try fixture.nextEntry()

        try Self.plist(host: "two.example.com").write(to: fixture.mainFile, atomically: true, encoding: .utf8)
        let applied = await reloader.reload(trigger: .control, callerUID: 4242, callerUnit: "example.service")
        #expect(applied.outcome == .applied)
        #expect(applied.changedKeys == ["APIBaseUrl", "Host"])
        let entry = try fixture.nextEntry()
        #expect(entry.filter { $0.0 == "CONFIG_CHANGED_KEY" }.map(\.1) == ["APIBaseUrl", "Host"])
        #expect(
            entry.filter { $0.0 == "CONFIG_PREVIOUS_SETTING" }.map(\.1) == [
                "APIBaseUrl=https://one.example.com/v1", "Host=one.example.com",
            ])
        #expect(entry.contains { $0 == ("CONFIG_GENERATION", "2") })
        #expect(entry.contains { $0 == ("CONFIG_TRIGGER", "control") })
        #expect(entry.contains { $0 == ("CONFIG_CALLER_UID", "4242") })
        #expect(entry.contains { $0 == ("CONFIG_CALLER_UNIT", "example.service") })

        let unchanged = await reloader.reload(trigger: .fleet, revision: 77)
        #expect(unchanged.outcome == .unchanged)
        let same = try fixture.nextEntry()
        #expect(same.contains { $0 == ("MESSAGE_ID", ConfigurationMessageID.unchanged) })
        #expect(same.contains { $0 == ("CONFIG_TRIGGER", "fleet") })
        #expect(same.contains { $0 == ("CONFIG_FLEET_REVISION", "77") })
        #expect(same.contains { $0 == ("CONFIG_GENERATION", "2") })

        try "<plist><dict>\n<key>Common</key>\n<strin>x</string>".write(
            to: fixture.mainFile, atomically: true, encoding: .utf8)
        let rejected = await reloader.reload(trigger: .signal)
        #expect(rejected.outcome == .rejected)
        #expect(rejected.generation == 2)
        let rejection = try fixture.nextEntry()
        #expect(rejection.contains { $0 == ("MESSAGE_ID", ConfigurationMessageID.rejected) })
        #expect(rejection.contains { $0 == ("CONFIG_FILE", fixture.mainFile.path) })
        #expect(rejection.contains { $0 == ("CONFIG_LINE", "3") })
        #expect(rejection.contains { $0 == ("CONFIG_ERROR_CODE", "malformedFile") })
        #expect(rejection.contains { $0 == ("CONFIG_TRIGGER", "signal") })
        #expect(!rejection.contains { $0.0 == "CONFIG_CALLER_UID" })
        #expect(environment.get("Host", default: "") == "two.example.com")

        try Self.plist(host: "two.example.com", port: 9090).write(
            to: fixture.mainFile, atomically: true, encoding: .utf8)
        await reloader.reload(trigger: .file)
        _ = try fixture.nextEntry()  // applied (pending restart changes the snapshot)
        let pending = try fixture.nextEntry()
        #expect(pending.contains { $0 == ("MESSAGE_ID", ConfigurationMessageID.pendingRestart) })
        #expect(pending.contains { $0 == ("CONFIG_PENDING_RESTART", "ListenPort=9090") })
        #expect(environment.get("ListenPort", default: 0) == 8080)

        let state = try ReloadState.read(from: fixture.stateFile)
        #expect(state.pendingRestart == ["ListenPort"])
        #expect(state.lastReload?.trigger == "file")
        #expect(state.environment == "Staging")
        #expect(state.resolvedDirectory == fixture.root.path)

        let history = await reloader.historyReply
        #expect(history.entries.map(\.outcome) == [.loaded, .applied, .unchanged, .rejected, .applied])
        #expect(history.entries.map(\.generation) == [1, 2, 2, 2, 3])
        #expect(history.entries.map(\.trigger) == ["start", "control", "fleet", "signal", "file"])
        #expect(history.entries[1].callerUID == 4242)
        #expect(history.entries[1].callerUnit == "example.service")
        #expect(history.entries[1].triggerDescription() == "control from uid 4242 in example.service")
        #expect(
            history.entries[1].triggerDescription(daemonUnit: "example.service")
                == "systemctl reload (ExecReload=, uid 4242)")
        #expect(history.entries[2].revision == 77)
        #expect(
            history.entries[1].settingChanges == [
                SettingChangeRecord(
                    key: "APIBaseUrl", previous: "https://one.example.com/v1", value: "https://two.example.com/v1"),
                SettingChangeRecord(key: "Host", previous: "one.example.com", value: "two.example.com"),
            ])
        #expect(history.entries[3].error?.code == .malformedFile)
        #expect(history.entries[3].error?.line == 3)
        #expect(history.entries.allSatisfy { $0.pid == getpid() })
        #expect(history.dropped == 0)
    }

    /// A configuration of `count` settings `Key00000`… in Common, each `valueBytes` long, the
    /// first one `first`.
    static func largePlist(count: Int, valueBytes: Int, first: String) -> String {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>Common</key><dict>\n"
        let filler = String(repeating: "v", count: valueBytes)
        for index in 0..<count {
            let key = "Key" + String(repeating: "0", count: 5 - String(index).count) + String(index)
            text += "<key>\(key)</key><string>\(index == 0 ? first : filler)</string>\n"
        }
        return text + "</dict><key>Staging</key><dict/></dict></plist>\n"
    }

    @Test(
        "a large configuration: one bounded entry at start and per reload (the changed keys first, a count, how to see the rest), delivered whole",
        arguments: [(count: 20_000, valueBytes: 8), (count: 2_000, valueBytes: 5_000)])
    func boundedEntries(count: Int, valueBytes: Int) async throws {
        let fixture = try Fixture()
        try Self.largePlist(count: count, valueBytes: valueBytes, first: "one").write(
            to: fixture.mainFile, atomically: true, encoding: .utf8)
        let environment = try fixture.environment()
        let reporter = ConfigurationReporter(
            output: .socket(fixture.journal.path), identifier: "reporter-test", logger: Logger(label: "test"),
            showCommand: "envctl show --app-name test")
        let reloader = ConfigurationReloader(
            environment: environment, reporter: reporter, stateFile: nil, levelControl: nil,
            logger: Logger(label: "test"))
        await reloader.start()
        for expectedChange in [nil, "Key00000"] {
            if expectedChange != nil {
                try Self.largePlist(count: count, valueBytes: valueBytes, first: "two").write(
                    to: fixture.mainFile, atomically: true, encoding: .utf8)
                #expect(await reloader.reload(trigger: .signal).outcome == .applied)
            }
            let datagram = try #require(fixture.journal.receive(timeout: .seconds(30)))
            let fields = datagram.split(separator: "\n")
            func values(_ name: String) -> [Substring] {
                fields.filter { $0.hasPrefix(name + "=") }.map { $0.dropFirst(name.count + 1) }
            }
            // journald drops an entry of more than 1,024 fields (with about 30 of its own).
            #expect(fields.count <= 500)
            #expect(datagram.utf8.count <= 160_000)
            #expect(values("MESSAGE_ID") == [Substring(ConfigurationMessageID.applied)])
            // 100 settings, or fewer when 64 KiB of text is reached first (values cut at 1 KiB).
            let listed = values("CONFIG_SETTING").count
            #expect(valueBytes < 100 ? listed == 100 : (50..<100).contains(listed))
            #expect(values("CONFIG_SETTING_COUNT") == ["\(count)"])
            #expect(values("CONFIG_SETTING_UNLISTED") == ["\(count - listed)"])
            let message = try #require(values("MESSAGE").first)
            // The message lists the first settings (the changed ones first) for the plain journal.
            #expect(message.hasPrefix("Configuration \(expectedChange == nil ? "loaded" : "applied"): "))
            #expect(message.contains("\(count) settings: Key00000=\(expectedChange == nil ? "one" : "two"), "))
            #expect(message.contains(" more (`envctl show --app-name test` lists them all)"))
            #expect(message.utf8.count < 3000)
            #expect(values("CONFIG_SETTING").allSatisfy { $0.utf8.count <= 1024 + 40 })
            if let expectedChange {
                #expect(values("CONFIG_CHANGED_KEY") == [Substring(expectedChange)])
                #expect(values("CONFIG_PREVIOUS_SETTING") == ["Key00000=one"])
                #expect(values("CONFIG_SETTING").first == "Key00000=two")
            } else {
                #expect(values("CONFIG_SETTING").first == "Key00000=one")
            }
        }
    }
}
