import Environments
import EnvironmentsEditing
import Foundation
import Testing

/// ``ConfigurationEditError`` as another tool meets it, through the public API on real files:
/// a value the declaration refuses is never written (the files stay byte for byte as they
/// were), and every refusal says what kind it is by its code.
@Suite struct ConfigurationEditErrorTests {
    typealias Configuration = ConfigurationEditorTests.Configuration

    /// The declaration the main file of ``ConfigurationEditorTests`` satisfies: each key with
    /// a type and a bound or a rule.
    static let declaration = SettingsDeclaration([
        Setting<String>("LogLevel", default: "info", bounds: .oneOf("debug", "info", "warning", "error")),
        Setting<Int>("Port", default: 8080, bounds: .range(1...65535)),
        Setting<String?>("APIHost", bounds: .pattern("[a-z]+\\.example")),
        Setting<String?>("Token", bounds: .pattern("[0-9a-f]{8}"), secret: true),
    ])

    /// A configuration whose drop-in sets `Port` already, and its bytes.
    static func configurationWithDropIn() throws -> (Configuration, Data) {
        let configuration = try Configuration()
        try configuration.write(
            ConfigurationEditorTests.common("<key>Port</key><integer>9090</integer>"), dropIn: "90-local.plist")
        return (configuration, try Data(contentsOf: URL(fileURLWithPath: configuration.dropIn)))
    }

    /// The files of `configuration` (the main file and every drop-in), by name, as bytes.
    static func files(_ configuration: Configuration) -> [String: Data] {
        var files = ["Environments.plist": FileManager.default.contents(atPath: configuration.mainFile)]
        for name in configuration.dropInNames {
            files[name] = FileManager.default.contents(atPath: configuration.dropIns + "/" + name)
        }
        return files.compactMapValues { $0 }
    }

    @Test("a value of the wrong type is refused with rejectedValue, and the files stay as they were")
    func wrongTypeIsRefused() throws {
        let (configuration, _) = try Self.configurationWithDropIn()
        let before = Self.files(configuration)
        let editor = try configuration.editor(declaration: Self.declaration)
        let error = #expect(throws: ConfigurationEditError.self) { try editor.set("Port", to: .string("abc")) }
        #expect(error?.code == .rejectedValue)
        #expect(error?.key == "Port")
        #expect(error?.message.contains("expected an integer") == true, "\(String(describing: error))")
        #expect(error?.configurationError?.code == .validationFailed)
        #expect(Self.files(configuration) == before)
    }

    @Test("a value out of the declared bounds is refused with rejectedValue, and the files stay as they were")
    func outOfBoundsIsRefused() throws {
        let (configuration, _) = try Self.configurationWithDropIn()
        let before = Self.files(configuration)
        let editor = try configuration.editor(declaration: Self.declaration)
        let error = #expect(throws: ConfigurationEditError.self) { try editor.set("Port", to: .integer(70000)) }
        #expect(error?.code == .rejectedValue)
        #expect(error?.key == "Port")
        #expect(error?.message.contains("out of range") == true, "\(String(describing: error))")
        #expect(error?.environment != nil)
        #expect(error?.description.contains("envctl explain Port") == true, "\(String(describing: error))")
        #expect(Self.files(configuration) == before)
        // In an environment's section too, and with no drop-in yet: none is made.
        let fresh = try Configuration()
        let staging = #expect(throws: ConfigurationEditError.self) {
            try fresh.editor(declaration: Self.declaration).set("Port", to: .integer(0), environment: "Staging")
        }
        #expect(staging?.code == .rejectedValue)
        #expect(staging?.environment == "Staging")
        #expect(!FileManager.default.fileExists(atPath: fresh.dropIns))
    }

    @Test("a value failing the declared rule (allowed values, pattern) is refused, and the files stay as they were")
    func failingARuleIsRefused() throws {
        let (configuration, _) = try Self.configurationWithDropIn()
        let before = Self.files(configuration)
        let editor = try configuration.editor(declaration: Self.declaration)
        let level = #expect(throws: ConfigurationEditError.self) { try editor.set("LogLevel", to: .string("loud")) }
        #expect(level?.code == .rejectedValue)
        #expect(level?.message.contains("not an allowed value") == true, "\(String(describing: level))")
        let host = #expect(throws: ConfigurationEditError.self) {
            try editor.set("APIHost", to: .string("API.example.com"), environment: "Release")
        }
        #expect(host?.code == .rejectedValue)
        #expect(host?.key == "APIHost")
        #expect(host?.message.contains("does not match the pattern") == true, "\(String(describing: host))")
        #expect(Self.files(configuration) == before)
        // What the declaration accepts is written.
        _ = try editor.set("LogLevel", to: .string("debug"))
        _ = try editor.set("Port", to: .integer(65535))
        #expect(try configuration.section(of: configuration.dropIn)["Port"] as? Int == 65535)
    }

    @Test("install refuses contents with a value the declaration refuses, naming its line, and writes nothing")
    func installRefusesARejectedValue() throws {
        let (configuration, original) = try Self.configurationWithDropIn()
        let before = Self.files(configuration)
        let editor = try configuration.editor(declaration: Self.declaration)
        let contents = ConfigurationEditorTests.common("<key>Port</key>\n<integer>70000</integer>")
        let error = #expect(throws: ConfigurationEditError.self) {
            try editor.install(Data(contents.utf8), replacing: original)
        }
        #expect(error?.code == .rejectedValue)
        #expect(error?.key == "Port")
        #expect(error?.line != nil, "\(String(describing: error))")
        #expect(Self.files(configuration) == before)
    }

    @Test("a refused secret value is not in the error")
    func secretValueIsNotShown() throws {
        let configuration = try Configuration()
        let editor = try configuration.editor(declaration: Self.declaration)
        let error = #expect(throws: ConfigurationEditError.self) {
            try editor.set("Token", to: .string("hunter2-password"))
        }
        #expect(error?.code == .rejectedValue)
        #expect(error.map { !"\($0)".contains("hunter2") } == true, "\(String(describing: error))")
        #expect(error?.configurationError.map { !"\($0)".contains("hunter2") } ?? true)
        #expect(!FileManager.default.fileExists(atPath: configuration.dropIns))
    }

    @Test("the declaration of EnvironmentOptions is the editor's when none is given")
    func optionsDeclarationIsUsed() throws {
        let configuration = try Configuration()
        var options = configuration.options
        options.declaration = Self.declaration
        let editor = try ConfigurationEditor(options: options)
        // Matched as another tool matches it: the thrown type is ConfigurationEditError.
        var matched: String?
        do {
            _ = try editor.set("Port", to: .integer(70000))
        } catch  where error.code == .rejectedValue {
            matched = error.key
        } catch {
            Issue.record("not rejectedValue: \(error)")
        }
        #expect(matched == "Port")
        let undeclared = #expect(throws: ConfigurationEditError.self) { try editor.set("Prot", to: .integer(1)) }
        #expect(undeclared?.code == .undeclaredKey)
        #expect(!FileManager.default.fileExists(atPath: configuration.dropIns))
    }

    /// The code of the refusal `body` throws; `nil` when it throws none, or another error.
    static func code(_ body: () throws -> Void) -> ConfigurationEditError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? ConfigurationEditError)?.code
        }
    }

    @Test("each kind of refusal has its code")
    func codes() throws {
        let (configuration, original) = try Self.configurationWithDropIn()
        try configuration.write(
            ConfigurationEditorTests.common("<key>LogLevel</key><string>warning</string>"), dropIn: "95-ops.plist")
        let before = Self.files(configuration)
        let editor = try configuration.editor(declaration: Self.declaration)
        #expect(Self.code { _ = try editor.set("LogLevl", to: .string("debug")) } == .undeclaredKey)
        #expect(Self.code { _ = try editor.set("LogLevel", to: .string("debug")) } == .shadowedKey)
        #expect(Self.code { _ = try editor.unset(["APIHost"]) } == .keyNotSet)
        #expect(Self.code { _ = try editor.set("Port..", to: .integer(1)) } == .invalidKey)
        #expect(
            Self.code { _ = try editor.set("Port.Inner", to: .integer(1), allowUndeclared: true) } == .invalidKey)
        #expect(Self.code { _ = try editor.set("APIHost", to: .string("a\u{1B}b")) } == .unwritableCharacter)
        #expect(
            Self.code { _ = try editor.set("APIHost", to: .string("https://${Missing}/"), environment: "Release") }
                == .invalidConfiguration)
        #expect(Self.code { _ = try editor.install(Data("<plist><dict>".utf8), replacing: original) } == .malformedFile)
        let again = ConfigurationEditorTests.common("<key>Port</key><integer>9091</integer>")
        #expect(Self.code { _ = try editor.install(Data(again.utf8), replacing: nil) } == .conflict)
        #expect(
            Self.code { _ = try ConfigurationEditor(options: configuration.options, dropIn: "../escape") }
                == .invalidName)
        #expect(Self.files(configuration) == before)
        // The codes' names, for logs.
        #expect(ConfigurationEditError.Code.rejectedValue.description == "rejectedValue")
    }
}
