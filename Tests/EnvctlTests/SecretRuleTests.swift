import Environments
import EnvironmentsDaemon
import Foundation
import Logging
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One rule for "is this value secret" (issue 53 item 3): a key listed in a file's `Secrets`, or
/// declared `secret: true` by the application (in the installed schema
/// `/usr/share/NAME/schema.json`, or by the running daemon), is redacted by every output of
/// envctl that could print it. Each way of declaring it is fed to each command.
///
/// Not here: `history` (its values come from the daemon's journal entries, which the daemon's
/// own load redacts, as the journal entry's tests show), and the fleet's status and metrics
/// labels, which hold no value (a rejection is written as file, line, key and code; behind the
/// trait Fleet, not built here).
@Suite(.serialized, .blocking) struct SecretRuleTests {
    /// The declaration of the application: `ApiToken` is secret, `Greeting` is not.
    static let declaration = SettingsDeclaration([
        Setting<String?>("ApiToken", secret: true),
        Setting<String>("Greeting", default: "hi"),
    ])

    static let fileValue = "file-secret-1234"
    static let stagingValue = "staging-secret-5678"
    static let typedValue = "typed-secret-9012"
    static let secrets = [fileValue, stagingValue, typedValue]

    /// The configuration: `ApiToken` in Common and Staging; listed in `Secrets` when `listed`.
    static func plist(listed: Bool) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>Common</key><dict><key>ApiToken</key><string>\(fileValue)</string><key>Greeting</key><string>hello</string></dict>
        <key>Production</key><dict/>
        <key>Staging</key><dict><key>ApiToken</key><string>\(stagingValue)</string></dict>
        \(listed ? "<key>Secrets</key><array><string>ApiToken</string></array>" : "")
        </dict></plist>
        """
    }

    /// Runs envctl and expects none of the secret values in what it prints.
    static func expectRedacted(
        _ arguments: [String], _ what: String, mayFail: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let ran = try EnvctlMigrateTests.envctl(arguments)
        if !mayFail {
            #expect(ran.status == 0, "\(what): \(ran.output)", sourceLocation: sourceLocation)
        }
        for secret in secrets {
            #expect(
                !ran.output.contains(secret), "\(what) prints a secret: \(ran.output)", sourceLocation: sourceLocation)
        }
    }

    /// Every command that reads the files, as an operator runs it with `location`.
    static func everyFileCommand(_ location: [String], _ way: String) throws {
        try expectRedacted(["set", "ApiToken", typedValue] + location, "\(way): set's confirmation")
        try expectRedacted(["show", "--environment", "Production"] + location, "\(way): show")
        try expectRedacted(["show", "--json", "--environment", "Production"] + location, "\(way): show --json")
        try expectRedacted(["show", "--environment", "Staging"] + location, "\(way): show Staging")
        try expectRedacted(["get", "ApiToken", "--environment", "Production"] + location, "\(way): get", mayFail: true)
        try expectRedacted(["get", "ApiToken", "--environment", "Staging"] + location, "\(way): get", mayFail: true)
        try expectRedacted(["diff", "Production", "Staging"] + location, "\(way): diff", mayFail: true)
        try expectRedacted(["explain", "ApiToken"] + location, "\(way): explain", mayFail: true)
        try expectRedacted(["check"] + location, "\(way): check", mayFail: true)
        try expectRedacted(["unset", "ApiToken"] + location, "\(way): unset")
    }

    @Test("a key listed in Secrets is redacted by set, show, get, diff, explain, check and unset")
    func listedInSecrets() throws {
        let files = try TemporaryConfiguration("secret-rule-listed", plist: Self.plist(listed: true))
        try Self.everyFileCommand(["--config-dir", files.configDirectory], "listed in Secrets")
    }

    @Test("a key the installed schema declares secret is redacted by set, show, get, diff, explain, check and unset")
    func declaredInInstalledSchema() throws {
        try #require(geteuid() == 0, "needs root, to install /usr/share/NAME/schema.json")
        let name = "secret-rule-\(UUID().uuidString.prefix(8).lowercased())"
        let share = "/usr/share/\(name)"
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: share) }
        try Self.declaration.jsonSchema(title: name).write(to: URL(fileURLWithPath: share + "/schema.json"))
        let files = try TemporaryConfiguration("secret-rule-installed", plist: Self.plist(listed: false))
        try Self.everyFileCommand(
            ["--app-name", name, "--config-dir", files.configDirectory], "declared in the installed schema")
    }

    @Test("a key the running daemon declares secret is redacted by set, show, get, diff, explain and unset")
    func declaredByTheDaemon() async throws {
        let fixture = try ControlSocketFixture()
        try fixture.write(Self.plist(listed: false))
        var options = EnvironmentOptions(
            applicationName: "control-tests", environment: "Production", configDirectory: fixture.root + "/etc",
            processEnvironment: ["CREDENTIALS_DIRECTORY": fixture.root + "/credentials"])
        options.declaration = Self.declaration
        let environment = try Environment(options: options)
        let socket = ["--socket", fixture.socket]
        try await fixture.service(environment).whileRunning {
            try await onThread {
                let way = "declared by the daemon"
                try Self.expectRedacted(["set", "ApiToken", Self.typedValue] + socket, "\(way): set's confirmation")
                try Self.expectRedacted(["show"] + socket, "\(way): show")
                try Self.expectRedacted(["get", "ApiToken"] + socket, "\(way): get", mayFail: true)
                try Self.expectRedacted(["diff", "--running"] + socket, "\(way): diff --running", mayFail: true)
                try Self.expectRedacted(
                    ["diff", "Production", "Staging", "--config-dir", fixture.root + "/etc"] + socket,
                    "\(way): diff", mayFail: true)
                try Self.expectRedacted(["explain", "ApiToken"] + socket, "\(way): explain", mayFail: true)
                try Self.expectRedacted(["unset", "ApiToken"] + socket, "\(way): unset")
            }
        }
    }
}
