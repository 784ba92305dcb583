import Environments
import Foundation
import TestSupport
import Testing

/// `envctl check` counts in English: one setting, two settings (issue 53).
@Suite(.blocking) struct CheckCountTests {
    @Test("check says 1 setting, and 2 settings", arguments: [1, 2])
    func count(settings: Int) throws {
        let keys = (1...settings).map { "<key>Key\($0)</key><string>v</string>" }.joined()
        let files = try TemporaryConfiguration(
            "check-count-\(settings)", plist: plistDocument("<key>Production</key><dict>\(keys)</dict>"))
        let schema = files.root + "/schema.json"
        try SettingsDeclaration((1...settings).map { Setting<String>("Key\($0)", default: "d") })
            .jsonSchema(title: "check-count").write(to: URL(fileURLWithPath: schema))
        let check = try EnvctlMigrateTests.envctl(
            ["check", "--config-dir", files.configDirectory, "--environment", "Production", "--schema", schema])
        #expect(check.status == 0, "\(check.output)")
        let noun = settings == 1 ? "setting" : "settings"
        #expect(check.output.contains("checking against the \(settings) \(noun) declared in"), "\(check.output)")
        #expect(check.output.contains("OK: environment Production, \(settings) \(noun) from"), "\(check.output)")
    }
}
