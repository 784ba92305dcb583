import Environments
import Foundation
import TestSupport
import Testing

/// The declaration as JSON Schema 2020-12, and back.
@Suite(.blocking) struct SettingsSchemaTests {
    /// Every type a declaration holds, with every part of a declaration.
    static var everything: SettingsDeclaration {
        SettingsDeclaration(
            Declared.all.settings + [
                SettingDeclaration("Ratio", type: .real, default: .real(0.25), bounds: .range(0.0...1.0)),
                SettingDeclaration("Verbose", type: .boolean, default: .bool(false), summary: "Log more"),
                SettingDeclaration(
                    "Epoch", type: .date, default: .date(Date(timeIntervalSince1970: 1_700_000_000))),
                SettingDeclaration("Key", type: .data, default: .data(Data([0, 1, 2, 255])), secret: true),
                SettingDeclaration("Cache", type: .section, summary: "Decoded as a whole"),
                SettingDeclaration("Extra", type: .any),
                SettingDeclaration(
                    "Mirrors", type: .array(.url), default: .array([.string("https://a.example")]),
                    bounds: .schemes("https")),
                SettingDeclaration(
                    "Limits", type: .map(.integer), default: .dictionary(["a": .integer(1)]), bounds: .range(0...10)),
                SettingDeclaration("Region", type: .custom("Region"), summary: "A region of our own"),
                SettingDeclaration(
                    "Service.Name", type: .string, required: .always, summary: "Required everywhere",
                    formerNames: ["ServiceName", "Old.Name"]),
                SettingDeclaration(#"Hosts."api.example.com".Weight"#, type: .integer, default: .integer(1)),
                SettingDeclaration("Window", type: .duration, bounds: SettingBounds(minimum: 1, maximum: 60)),
            ])
    }

    static func expectSame(_ read: SettingsDeclaration, _ written: SettingsDeclaration) {
        #expect(read.settings.count == written.settings.count)
        for setting in written.settings {
            guard let back = read.declaration(forKey: setting.key) else {
                Issue.record("\(setting.key) did not come back")
                continue
            }
            #expect(back.type == setting.type, "\(setting.key)")
            #expect(back.defaultValue == setting.defaultValue, "\(setting.key)")
            #expect(back.requirement == setting.requirement, "\(setting.key)")
            #expect(back.bounds == setting.bounds, "\(setting.key)")
            #expect(back.isSecret == setting.isSecret, "\(setting.key)")
            #expect(back.isRestartOnly == setting.isRestartOnly, "\(setting.key)")
            #expect(back.summary == setting.summary, "\(setting.key)")
            #expect(back.formerNames == setting.formerNames, "\(setting.key)")
        }
    }

    @Test("a declaration written as JSON Schema reads back the same, and writes the same text again")
    func roundTrip() throws {
        let data = Self.everything.jsonSchema(title: "tests")
        let read = try SettingsDeclaration(jsonSchema: data)
        Self.expectSame(read, Self.everything)
        #expect(read.jsonSchemaText(title: "tests") == Self.everything.jsonSchemaText(title: "tests"))
    }

    @Test("the document is JSON Schema 2020-12: nested properties, maps, arrays, formats and our annotations")
    func document() throws {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Self.everything.jsonSchema(title: "tests")) as? [String: Any])
        #expect(document["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        #expect(document["type"] as? String == "object")
        #expect(document["title"] as? String == "tests")
        #expect(document["required"] as? [String] == ["Service"])
        let properties = try #require(document["properties"] as? [String: Any])
        let port = try #require(properties["ListenPort"] as? [String: Any])
        #expect(port["type"] as? String == "integer")
        #expect(port["minimum"] as? Int == 1)
        #expect(port["maximum"] as? Int == 65535)
        #expect(port["default"] as? Int == 8080)
        #expect(port["x-restart-only"] as? Bool == true)
        #expect(port["description"] as? String == "The TCP port")
        let database = try #require(properties["Database"] as? [String: Any])
        let databaseProperties = try #require(database["properties"] as? [String: Any])
        let password = try #require(databaseProperties["Password"] as? [String: Any])
        #expect(password["x-secret"] as? Bool == true)
        #expect(password["x-required-in"] as? [String] == ["Production"])
        let databasePort = try #require(databaseProperties["Port"] as? [String: Any])
        #expect(databasePort["x-former-names"] as? [String] == ["DatabasePort"])
        let host = try #require(databaseProperties["Host"] as? [String: Any])
        #expect(host["pattern"] as? String == "^(?:[a-z0-9.-]+)$")
        let level = try #require(properties["LogLevel"] as? [String: Any])
        #expect((level["enum"] as? [String])?.first == "trace")
        let url = try #require(properties["APIBaseUrl"] as? [String: Any])
        #expect(url["format"] as? String == "uri")
        #expect(url["x-url-schemes"] as? [String] == ["http", "https"])
        let timeout = try #require(properties["RequestTimeout"] as? [String: Any])
        #expect(timeout["type"] as? [String] == ["string", "number"])
        #expect(timeout["pattern"] as? String == SettingsDeclaration.durationPattern)
        #expect(timeout["minimum"] as? Double == 0.001)
        let upstreams = try #require(properties["Upstreams"] as? [String: Any])
        #expect(upstreams["type"] as? String == "object")
        #expect((upstreams["additionalProperties"] as? [String: Any])?["format"] as? String == "uri")
        let mirrors = try #require(properties["Mirrors"] as? [String: Any])
        #expect((mirrors["items"] as? [String: Any])?["x-url-schemes"] as? [String] == ["https"])
        #expect((properties["Epoch"] as? [String: Any])?["format"] as? String == "date-time")
        #expect((properties["Key"] as? [String: Any])?["contentEncoding"] as? String == "base64")
        let hosts = try #require(properties["Hosts"] as? [String: Any])
        // A key that holds dots stays one property.
        #expect((hosts["properties"] as? [String: Any])?["api.example.com"] != nil)
    }

    @Test("files checked with the declaration read back fail and warn exactly as with the program's")
    func sameChecks() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": [
                    "ListenPort": 70000, "RequestTimeout": "20min", "LogLevel": "loud", "DatabasePort": 5433,
                    "Tags": ["ok", "NO"], "ListenPrt": 1,
                ],
                "Debug": [String: Any](),
                "Production": [String: Any](),
            ])
            let read = try SettingsDeclaration(jsonSchema: Declared.all.jsonSchema())
            #expect(read.settings.map(\.key) == Declared.all.settings.map(\.key))
            for environment in ["Debug", "Production"] {
                func outcome(_ declaration: SettingsDeclaration) -> String {
                    var options = directory.options(environment: environment)
                    options.declaration = declaration
                    do {
                        let snapshot = try Environment(options: options).snapshot
                        return "loaded: " + snapshot.warnings.map(\.description).joined(separator: "\n")
                    } catch {
                        return "failed: \(error)"
                    }
                }
                let expected = outcome(Declared.all)
                #expect(expected.hasPrefix("failed: "))
                #expect(expected.contains("ListenPort"))
                #expect(outcome(read) == expected)
            }
        }
    }

    @Test("a schema written by hand, without our annotations, reads by JSON Schema's own words")
    func handWritten() throws {
        let text = """
            {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
             "required": ["Name"],
             "properties": {
               "Name": {"type": "string", "pattern": "[a-z]+"},
               "Port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 80},
               "Home": {"type": "string", "format": "uri"},
               "Ratio": {"type": "number"},
               "On": {"type": "boolean", "default": true},
               "When": {"type": "string", "format": "date-time"},
               "Blob": {"type": "string", "contentEncoding": "base64"},
               "List": {"type": "array", "items": {"type": "integer"}},
               "Peers": {"type": "object", "additionalProperties": {"type": "string"}},
               "Nested": {"type": "object", "properties": {"Deep": {"type": "string", "enum": ["a", "b"]}}}
             }}
            """
        let declaration = try SettingsDeclaration(jsonSchema: Data(text.utf8))
        #expect(
            declaration.settings.map(\.key).sorted() == [
                "Blob", "Home", "List", "Name", "Nested.Deep", "On", "Peers", "Port", "Ratio", "When",
            ])
        #expect(declaration.declaration(forKey: "Name")?.requirement == .always)
        #expect(declaration.declaration(forKey: "Name")?.bounds.pattern == "(?:.*[a-z]+.*)")
        #expect(declaration.declaration(forKey: "Port")?.defaultValue == .integer(80))
        #expect(declaration.declaration(forKey: "Port")?.bounds.maximum == 65535)
        #expect(declaration.declaration(forKey: "Home")?.type == .url)
        #expect(declaration.declaration(forKey: "Ratio")?.type == .real)
        #expect(declaration.declaration(forKey: "On")?.defaultValue == .bool(true))
        #expect(declaration.declaration(forKey: "When")?.type == .date)
        #expect(declaration.declaration(forKey: "Blob")?.type == .data)
        #expect(declaration.declaration(forKey: "List")?.type == .array(.integer))
        #expect(declaration.declaration(forKey: "Peers")?.type == .map(.string))
        #expect(declaration.declaration(forKey: "Nested.Deep")?.bounds.allowedValues == [.string("a"), .string("b")])
    }

    @Test("a document that is no settings schema is an error that says where")
    func errors() {
        func error(_ text: String) -> String? {
            do {
                _ = try SettingsDeclaration(jsonSchema: Data(text.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(error("not json")?.hasPrefix("invalid settings schema: not JSON") == true)
        #expect(error("[]") == "invalid settings schema: the document is not a JSON object")
        #expect(
            error(#"{"$schema": "http://json-schema.org/draft-07/schema#"}"#)?.contains(
                "expected https://json-schema.org/draft/2020-12/schema") == true)
        #expect(
            error(#"{"properties": {"A": {"type": "integer", "default": "x"}}}"#)
                == "invalid settings schema at /properties/A: the default is not an integer")
        #expect(
            error(#"{"properties": {"A": {"x-type": "colour"}}}"#)
                == "invalid settings schema at /properties/A: unknown x-type 'colour'")
        #expect(
            error(#"{"properties": {"A": {"type": "string", "x-secret": "yes"}}}"#)
                == "invalid settings schema at /properties/A: x-secret is not true or false")
    }

    @Test("the effective configuration as JSON validates against the schema with Python's jsonschema")
    func pythonJSONSchema() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": [
                    "ListenPort": 9000, "RequestTimeout": "250ms", "APIBaseUrl": "https://api.example.com/v1",
                    "Database": ["Host": "db.example.com"], "Upstreams": ["api.example.com": "https://api.example.com"],
                    "Tags": ["blue"],
                ],
                "Production": ["Database": ["Password": "hunter2"]],
            ])
            var options = directory.options(environment: "Production")
            options.declaration = Declared.all
            let snapshot = try Environment(options: options).snapshot
            let good = try effectiveJSON(of: snapshot)
            let schema = directory.path("schema.json")
            try Declared.all.jsonSchema().write(to: URL(fileURLWithPath: schema))
            try Data(good).write(to: URL(fileURLWithPath: directory.path("good.json")))
            try Data(#"{"ListenPort": 70000, "RequestTimeout": "soon", "Tags": ["UP"]}"#.utf8).write(
                to: URL(fileURLWithPath: directory.path("bad.json")))
            let checked = try validateWithPythonJSONSchema(
                schema: schema, documents: [directory.path("good.json"), directory.path("bad.json")])
            #expect(
                checked.status == 0,
                "python3 with jsonschema (>= 4.0, for draft 2020-12) is needed: scripts/install-packages.sh installs python3-jsonschema. \(checked.output)"
            )
            let output = checked.standardOutput
            #expect(output == "good.json: valid\nbad.json: ListenPort, RequestTimeout, Tags/0\n")
        }
    }
}
