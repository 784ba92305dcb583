import Environments
import EnvironmentsDaemon
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `set` and `edit` never write a value that the application's declaration refuses (a wrong
/// type, out of bounds, failing a rule), whether the declaration is the installed schema's or
/// the running daemon's, in every environment envctl checks (issue 52 item 4); a required key
/// that only the unit's environment gives blocks no change to another key.
@Suite(.serialized, .blocking) struct DeclaredValueTests {
    /// `ListenPort` 1...65535, `Mode` fast or slow, `Token` required in Production (the unit's
    /// `APP_Token` gives it: no file does).
    static let declaration = SettingsDeclaration([
        Setting<Int>("ListenPort", default: 8080, bounds: .range(1...65535)),
        Setting<String>("Mode", default: "fast", bounds: .oneOf("fast", "slow")),
        Setting<String?>("Token", required: .in("Production")),
    ])

    static let plist = plistDocument(
        "<key>Common</key><dict><key>Mode</key><string>fast</string></dict><key>Production</key><dict/><key>Staging</key><dict/>"
    )

    /// The drop-in directory's files, byte for byte.
    static func snapshot(_ configDirectory: String) -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: configDirectory)
        while let name = enumerator?.nextObject() as? String {
            files[name] = FileManager.default.contents(atPath: configDirectory + "/" + name)
        }
        return files
    }

    static func expectRefused(
        _ arguments: [String], _ configDirectory: String, _ what: String, environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = snapshot(configDirectory)
        let ran = try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment(environment))
        #expect(ran.status != 0, "\(what) was written: \(ran.output)", sourceLocation: sourceLocation)
        #expect(ran.output.contains("nothing was written"), "\(what): \(ran.output)", sourceLocation: sourceLocation)
        #expect(snapshot(configDirectory) == before, "\(what) changed a file", sourceLocation: sourceLocation)
    }

    @Test(
        "with the installed schema: set and edit refuse a value out of bounds, of the wrong type or failing a rule; a required key the unit gives blocks nothing"
    )
    func installedSchema() throws {
        try #require(geteuid() == 0, "needs root, to install /usr/share/NAME/schema.json")
        let name = "declared-value-\(UUID().uuidString.prefix(8).lowercased())"
        let share = "/usr/share/\(name)"
        try FileManager.default.createDirectory(atPath: share, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: share) }
        try Self.declaration.jsonSchema(title: name).write(to: URL(fileURLWithPath: share + "/schema.json"))
        let files = try TemporaryConfiguration("declared-value", plist: Self.plist)
        let location = ["--app-name", name, "--config-dir", files.configDirectory]

        try Self.expectRefused(
            ["set", "ListenPort", "70000", "--type", "integer"] + location, files.configDirectory, "out of bounds")
        try Self.expectRefused(["set", "ListenPort", "eighty"] + location, files.configDirectory, "a string")
        try Self.expectRefused(["set", "Mode", "medium"] + location, files.configDirectory, "not one of")
        let staging = ["set", "--environment", "Staging", "ListenPort", "0", "--type", "integer"]
        try Self.expectRefused(staging + location, files.configDirectory, "out of bounds in Staging")

        // An edit that writes one: refused, nothing installed.
        let edited = files.root + "/edited.plist"
        try plistDocument("<key>Common</key><dict><key>ListenPort</key><integer>99999</integer></dict>").write(
            toFile: edited, atomically: true, encoding: .utf8)
        try Self.expectRefused(
            ["edit"] + location, files.configDirectory, "an edit out of bounds",
            environment: ["VISUAL": "cp -- \(edited)"])

        // A good value is written, though Token (required in Production) is in no file.
        let good = try EnvctlMigrateTests.envctl(["set", "ListenPort", "8081", "--type", "integer"] + location)
        #expect(good.status == 0, "\(good.output)")
        let dropIn = files.configDirectory + "/Environments.plist.d/90-local.plist"
        #expect((try? String(contentsOfFile: dropIn, encoding: .utf8))?.contains("8081") == true)
    }

    @Test(
        "with the running daemon's declaration: set refuses a value out of bounds in an environment the daemon does not run"
    )
    func daemonDeclaration() async throws {
        let fixture = try ControlSocketFixture()
        try fixture.write(Self.plist)
        var options = EnvironmentOptions(
            applicationName: "control-tests", environment: "Production", configDirectory: fixture.root + "/etc",
            processEnvironment: ["CREDENTIALS_DIRECTORY": fixture.root + "/credentials", "APP_Token": "t"])
        options.declaration = Self.declaration
        let environment = try Environment(options: options)
        let configDirectory = fixture.root + "/etc"
        let socket = ["--socket", fixture.socket]
        try await fixture.service(environment).whileRunning {
            try await onThread {
                try Self.expectRefused(
                    ["set", "--environment", "Staging", "ListenPort", "70000", "--type", "integer"] + socket,
                    configDirectory, "out of bounds in Staging")
                try Self.expectRefused(["set", "Mode", "medium"] + socket, configDirectory, "not one of")
                let good = try EnvctlMigrateTests.envctl(["set", "ListenPort", "8081", "--type", "integer"] + socket)
                #expect(good.status == 0, "\(good.output)")
            }
        }
    }
}
