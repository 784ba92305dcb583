import Environments
import EnvironmentsEditing
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// ``ConfigurationEditor`` as another tool uses it: real configuration directories, changes
/// checked for every environment before anything is written, refusals that leave every file
/// as it was.
@Suite struct ConfigurationEditorTests {
    /// A configuration directory with `Environments.plist` (mode 0640), removed afterwards.
    final class Configuration {
        private let folder: TemporaryFolder
        var path: String { folder.path }

        init(_ main: String = ConfigurationEditorTests.mainFile) throws {
            folder = try TemporaryFolder("editing")
            try main.write(toFile: mainFile, atomically: true, encoding: .utf8)
            chmod(mainFile, 0o640)
        }

        var mainFile: String { path + "/Environments.plist" }
        var dropIns: String { path + "/Environments.plist.d" }
        var dropIn: String { dropIns + "/90-local.plist" }

        /// Options that read this directory and no `APP_` variable of the test process.
        var options: EnvironmentOptions {
            var options = EnvironmentOptions(applicationName: "orders", configDirectory: path)
            options.processEnvironment = [:]
            return options
        }

        func editor(declaration: SettingsDeclaration? = nil, dropIn: String? = nil) throws -> ConfigurationEditor {
            try ConfigurationEditor(options: options, dropIn: dropIn, declaration: declaration)
        }

        /// The names in the drop-in directory (hidden ones too), sorted.
        var dropInNames: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? []).sorted()
        }

        func write(_ text: String, dropIn name: String) throws {
            try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
            try text.write(toFile: dropIns + "/" + name, atomically: true, encoding: .utf8)
        }

        /// `Common` (or `section`) of a drop-in as Foundation reads it.
        func section(_ section: String = "Common", of file: String) throws -> [String: Any] {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let root = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
            return root?[section] as? [String: Any] ?? [:]
        }
    }

    static let mainFile = plist(
        """
        <key>Common</key>
        <dict>
            <key>LogLevel</key><string>info</string>
            <key>Port</key><integer>8080</integer>
        </dict>
        <key>Staging</key>
        <dict>
            <key>APIHost</key><string>staging.example</string>
        </dict>
        <key>Release</key>
        <dict>
            <key>APIHost</key><string>api.example</string>
        </dict>
        """)

    static func plist(_ body: String) -> String { plistDocument(body) + "\n" }

    /// A drop-in that sets `keys` (their `<key>` and value elements) in `Common` only.
    static func common(_ keys: String) -> String { plist("<key>Common</key><dict>\(keys)</dict>") }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return status.st_mode & 0o7777
    }

    @Test("set creates the drop-in with the configuration's permissions, and nothing else is left")
    func setCreatesTheDropIn() throws {
        let configuration = try Configuration()
        let edit = try configuration.editor().set("LogLevel", to: .string("debug"))
        #expect(edit.file == configuration.dropIn)
        #expect(edit.keys == ["Common.LogLevel"])
        #expect(edit.notes.isEmpty)
        #expect(try configuration.section(of: configuration.dropIn)["LogLevel"] as? String == "debug")
        // The most restrictive file's mode, not the umask's; no lock or temporary file left.
        #expect(Self.mode(configuration.dropIn) == 0o640)
        #expect(configuration.dropInNames == ["90-local.plist"])
        // The library reads what was written.
        var options = configuration.options
        options.environment = "Staging"
        #expect(try Environment(options: options).snapshot.value(forKey: "LogLevel") == .string("debug"))
    }

    @Test("set replaces the drop-in atomically, keeping its mode and its other keys")
    func setKeepsTheFile() throws {
        let configuration = try Configuration()
        try configuration.write(Self.common("<key>Port</key><integer>9090</integer>"), dropIn: "90-local.plist")
        chmod(configuration.dropIn, 0o600)
        var before = stat()
        stat(configuration.dropIn, &before)
        let edit = try configuration.editor().set("Database.Host", to: .string("db.example"), environment: "Staging")
        #expect(edit.keys == ["Staging.Database.Host"])
        var after = stat()
        stat(configuration.dropIn, &after)
        // A new file renamed over the old one, with the old one's mode.
        #expect(after.st_ino != before.st_ino)
        #expect(Self.mode(configuration.dropIn) == 0o600)
        #expect(try configuration.section(of: configuration.dropIn)["Port"] as? Int == 9090)
        let staging = try configuration.section("Staging", of: configuration.dropIn)
        #expect((staging["Database"] as? [String: Any])?["Host"] as? String == "db.example")
        #expect(configuration.dropInNames == ["90-local.plist"])
    }

    @Test("a change outweighed by a later drop-in is refused and nothing is written, unless allowShadowed")
    func shadowedKeyIsRefused() throws {
        let configuration = try Configuration()
        try configuration.write(Self.common("<key>LogLevel</key><string>warning</string>"), dropIn: "95-ops.plist")
        let editor = try configuration.editor()
        let error = #expect(throws: (any Error).self) { try editor.set("LogLevel", to: .string("debug")) }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("does not take effect"), "\(message)")
        #expect(message.contains("95-ops.plist"), "\(message)")
        #expect(message.contains("Nothing was written"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: configuration.dropIn))
        #expect(configuration.dropInNames == ["95-ops.plist"])

        let edit = try editor.set("LogLevel", to: .string("debug"), allowShadowed: true)
        #expect(edit.notes.count == 1 && edit.notes[0].contains("does not take effect"), "\(edit.notes)")
        #expect(FileManager.default.fileExists(atPath: configuration.dropIn))
    }

    @Test("a change that leaves an environment invalid is refused for every environment, with nothing written")
    func invalidResultIsRefused() throws {
        let configuration = try Configuration()
        let editor = try configuration.editor()
        // An interpolation of a key no environment sets fails to build.
        let error = #expect(throws: (any Error).self) {
            try editor.set("URL", to: .string("https://${Missing}/"), environment: "Release")
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("Release"))
        #expect(!FileManager.default.fileExists(atPath: configuration.dropIn))
    }

    @Test("a key or value with a character other property-list readers refuse is never written")
    func xmlCharactersAreRefused() throws {
        let configuration = try Configuration()
        let editor = try configuration.editor()
        let key = #expect(throws: (any Error).self) { try editor.set("Bad\u{1B}Key", to: .string("x")) }
        #expect("\(key.map { "\($0)" } ?? "")".contains("U+001B (ESC)"))
        let value = #expect(throws: (any Error).self) { try editor.set("Key", to: .string("a\rb")) }
        #expect("\(value.map { "\($0)" } ?? "")".contains("carriage return"))
        #expect(!FileManager.default.fileExists(atPath: configuration.dropIns))
    }

    @Test("a key the declaration does not cover is refused with the suggestion, unless allowUndeclared")
    func undeclaredKeyIsRefused() throws {
        let configuration = try Configuration()
        let declaration = SettingsDeclaration([
            SettingDeclaration("LogLevel", type: .string), SettingDeclaration("Port", type: .integer),
            SettingDeclaration("APIHost", type: .string),
        ])
        let editor = try configuration.editor(declaration: declaration)
        let error = #expect(throws: (any Error).self) { try editor.set("LogLevl", to: .string("debug")) }
        let message = "\(error.map { "\($0)" } ?? "")"
        #expect(message.contains("'LogLevl' is not a declared setting"), "\(message)")
        #expect(message.contains("did you mean 'LogLevel'?"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: configuration.dropIn))
        // A declared key is written; an undeclared one only when asked.
        _ = try editor.set("LogLevel", to: .string("debug"))
        _ = try editor.set("LogLevl", to: .string("debug"), allowUndeclared: true)
        #expect(try configuration.section(of: configuration.dropIn)["LogLevl"] as? String == "debug")
        // install checks what the new text writes, too.
        let text = Self.common("<key>Prot</key><integer>1</integer>")
        let current = FileManager.default.contents(atPath: configuration.dropIn)
        let installed = #expect(throws: (any Error).self) {
            try editor.install(Data(text.utf8), replacing: current)
        }
        #expect("\(installed.map { "\($0)" } ?? "")".contains("did you mean 'Port'?"))
        #expect(FileManager.default.contents(atPath: configuration.dropIn) == current)
    }

    @Test("install replaces the drop-in only over what it was read as")
    func installChecksWhatItReplaces() throws {
        let configuration = try Configuration()
        let editor = try configuration.editor(dropIn: "70-console")
        let first = Self.common("<key>Port</key><integer>8081</integer>")
        let edit = try editor.install(Data(first.utf8), replacing: nil)
        #expect(edit.file == configuration.dropIns + "/70-console.plist")
        #expect(edit.keys == ["Common.Port"])
        // Someone else wrote it since: a second install over "nothing" is refused.
        let second = Self.common("<key>Port</key><integer>8082</integer>")
        let stale = #expect(throws: (any Error).self) { try editor.install(Data(second.utf8), replacing: nil) }
        #expect("\(stale.map { "\($0)" } ?? "")".contains("no longer holds what the edit began with"))
        #expect(FileManager.default.contents(atPath: edit.file) == Data(first.utf8))
        // Text that is not a property list is refused with nothing written.
        let broken = #expect(throws: (any Error).self) {
            try editor.install(Data("<plist><dict><key>Common</key>".utf8), replacing: Data(first.utf8))
        }
        #expect(broken != nil)
        #expect(FileManager.default.contents(atPath: edit.file) == Data(first.utf8))
    }

    @Test("unset removes keys, and refuses one the drop-in does not set")
    func unset() throws {
        let configuration = try Configuration()
        let editor = try configuration.editor()
        _ = try editor.set("LogLevel", to: .string("debug"))
        _ = try editor.set("Port", to: .integer(9000))
        let missing = #expect(throws: (any Error).self) { try editor.unset(["Nope"]) }
        #expect("\(missing.map { "\($0)" } ?? "")".contains("does not set Common.Nope"))
        let edit = try editor.unset(["LogLevel"])
        #expect(edit.keys == ["Common.LogLevel"])
        let common = try configuration.section(of: configuration.dropIn)
        #expect(common["LogLevel"] == nil && common["Port"] as? Int == 9000)
    }

    @Test("a drop-in name that cannot be a file name is refused")
    func badDropInName() throws {
        let configuration = try Configuration()
        #expect(throws: (any Error).self) { try configuration.editor(dropIn: "../escape") }
    }
}
