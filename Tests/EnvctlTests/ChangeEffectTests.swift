import Foundation
import TestSupport
import Testing

@testable import EnvironmentsEditing
@testable import envctl

/// What an edit changed, key by key, and where keys are in a file's text.
@Suite struct ChangeEffectTests {
    @Test("differences lists keys written and removed, by section, instances as Instances.NAME")
    func differences() {
        let old: [String: Any] = [
            "Common": ["LogLevel": "info", "Database": ["Host": "a", "Port": 5432]],
            "Staging": ["APIHost": "staging.example"],
            "Instances": ["eu-west": ["APIHost": "eu.example"]],
            "Secrets": ["Database.Password"],
        ]
        let new: [String: Any] = [
            "Common": ["LogLevel": "debug", "Database": ["Host": "a", "Port": 5432], "Empty": [String: Any]()],
            "Production": ["APIHost": "production.example"],
            "Instances": ["eu-west": ["APIHost": "eu.example", "LogLevel": "trace"]],
            "Secrets": ["Database.Password", "Token"],
        ]
        let changes = ChangedKey.differences(old: old, new: new).map { "\($0.kind) \($0.label)" }
        #expect(
            changes == [
                "written Common.LogLevel", "written Instances.eu-west.LogLevel", "written Production.APIHost",
                "removed Staging.APIHost",
            ])
    }

    @Test("a key path with dots in a name is quoted as the configuration spells it")
    func quotedKey() {
        let change = ChangedKey(section: "Common", components: ["Upstreams", "api.example.com"], kind: .written)
        #expect(change.label == "Common.Upstreams.\"api.example.com\"")
        #expect(change.applies(environment: "Staging", instance: nil))
        let instance = ChangedKey(section: "Instances.eu-west", components: ["A"], kind: .written)
        #expect(instance.applies(environment: "Staging", instance: "eu-west"))
        #expect(!instance.applies(environment: "Staging", instance: nil))
    }

    @Test("same compares property-list values by value")
    func same() {
        #expect(ChangedKey.same(["a": [1, "x"]], ["a": [1, "x"]]))
        #expect(!ChangedKey.same(["a": [1, "x"]], ["a": [1, "y"]]))
        #expect(!ChangedKey.same(1, "1"))
        #expect(!ChangedKey.same(true, 1))
    }

    @Test("KeyLines finds a key inside its section, and not in a binary property list")
    func keyLines() throws {
        // The example's file: APIHost in Common on line 6, and again in Staging on line 14.
        let text = Data(examplePlist().utf8)
        #expect(KeyLines.line(of: ["Common", "APIHost"], in: text) == 6)
        #expect(KeyLines.line(of: ["Staging", "APIHost"], in: text) == 14)
        #expect(KeyLines.line(of: ["Production", "APIHost"], in: text) == nil)
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["Common": ["LogLevel": "info"]], format: .binary, options: 0)
        #expect(KeyLines.line(of: ["Common", "LogLevel"], in: binary) == nil)
        #expect(KeyLines.keyElement("a<b&c") == "<key>a&lt;b&amp;c</key>")
    }
}
