import Environments
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl set`, `unset` and `edit` never report a change that has no effect: what was asked
/// is compared with what takes effect, in every environment the files define, and a change
/// that another source outweighs is refused (unless `--allow-shadowed`), naming the source
/// that wins with its file and line (issue 34).
@Suite(.serialized, .blocking) struct EnvctlEffectTests {
    typealias Directory = ExampleConfigurationDirectory

    static func envctl(_ arguments: [String], environment: [String: String] = [:]) throws -> FinishedProcess {
        try runEnvctl(arguments, environment: environment)
    }

    /// A drop-in that sets `entries` (XML inside `<dict>`) in `section`, one key a line.
    static func dropIn(_ sections: [(String, String)]) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>

            """
        for (section, entries) in sections {
            text += "    <key>\(section)</key>\n    <dict>\n        \(entries)\n    </dict>\n"
        }
        return text + "</dict>\n</plist>\n"
    }

    static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Writes the drop-in `name` (`95-ops`) of `directory`, with `sections` as `dropIn` makes
    /// them; returns its path.
    @discardableResult
    static func writeDropIn(_ name: String, in directory: Directory, _ sections: [(String, String)]) throws -> String {
        let path = directory.path + "/Environments.plist.d/\(name).plist"
        try write(dropIn(sections), to: path)
        return path
    }

    /// `result` succeeded and said nothing about what takes effect: the change takes effect.
    static func expectTakesEffect(_ result: FinishedProcess, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == 0, "\(result.output)", sourceLocation: sourceLocation)
        #expect(!result.output.contains("note:"), "\(result.output)", sourceLocation: sourceLocation)
    }

    @Test("the default drop-in is 90-local, after the drop-ins a package ships")
    func defaultDropInSortsLast() throws {
        let directory = try Directory()
        #expect(directory.dropIn.hasSuffix("/Environments.plist.d/90-local.plist"))
        // A shipped drop-in numbered as packages number theirs: the default wins over it.
        try Self.writeDropIn("50-timeouts", in: directory, [("Common", "<key>LogLevel</key><string>notice</string>")])
        let set = try Self.envctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(set.status == 0, "\(set.output)")
        #expect(set.standardOutput.hasPrefix("\(directory.dropIn): Common.LogLevel = debug"), "\(set.output)")
        let get = try Self.envctl(["get", "LogLevel", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.output == "debug\n", "\(get.output)")
    }

    @Test("set shadowed by a later drop-in: exit 1 naming the winning file and line, nothing written")
    func setShadowedByALaterDropIn() throws {
        let directory = try Directory()
        let later = try Self.writeDropIn(
            "95-ops", in: directory, [("Common", "<key>LogLevel</key><string>warning</string>")])
        let before = try directory.contents()

        let set = try Self.envctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(set.status == 1, "\(set.output)")
        #expect(
            set.output.contains(
                "Common.LogLevel in \(directory.dropIn) does not take effect: in every environment (Staging), the value in effect is warning from \(later):6 [Common]"
            ), "\(set.output)")
        #expect(set.output.contains("Nothing was written"), "\(set.output)")
        #expect(set.output.contains("--allow-shadowed"), "\(set.output)")
        #expect(try directory.contents() == before)

        // Told that it is intended: written, and said all the same.
        let allowed = try Self.envctl([
            "set", "LogLevel", "debug", "--allow-shadowed", "--config-dir", directory.path,
        ])
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(allowed.output.contains("envctl: note: Common.LogLevel in \(directory.dropIn) does not take effect"))
        #expect(try String(contentsOfFile: directory.dropIn, encoding: .utf8).contains("<string>debug</string>"))
        let get = try Self.envctl(["get", "LogLevel", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.output == "warning\n")

        // Written where it wins, it is in effect.
        let there = try Self.envctl([
            "set", "LogLevel", "debug", "--drop-in", "96-ops", "--config-dir", directory.path,
        ])
        Self.expectTakesEffect(there)
    }

    @Test("a Common write that the drop-in's own environment section outweighs is refused, for that environment")
    func setToCommonShadowedByAnEnvironmentSection() throws {
        let directory = try Directory()
        try Self.writeDropIn(
            "90-local", in: directory,
            [
                ("Common", "<key>HeartbeatInterval</key><string>1s</string>"),
                ("Staging", "<key>LogLevel</key><string>debug</string>"),
            ])
        let before = try directory.contents()
        let set = try Self.envctl(["set", "LogLevel", "error", "--config-dir", directory.path])
        #expect(set.status == 1, "\(set.output)")
        #expect(
            set.output.contains(
                "in every environment (Staging), the value in effect is debug from \(directory.dropIn):10 [Staging]"),
            "\(set.output)")
        #expect(try directory.contents() == before)
        // For Staging itself, the write is where it wins.
        let staging = try Self.envctl([
            "set", "LogLevel", "error", "--environment", "Staging", "--config-dir", directory.path,
        ])
        #expect(staging.status == 0, "\(staging.output)")
    }

    @Test("a Common write that replaces values environments set for themselves says which")
    func setToCommonReplacesEnvironmentValues() throws {
        let directory = try Directory()
        let set = try Self.envctl(["set", "APIHost", "api.other.example", "--config-dir", directory.path])
        #expect(set.status == 0, "\(set.output)")
        #expect(
            set.output.contains(
                "envctl: note: Common.APIHost in \(directory.dropIn) also replaces what these set for themselves: every environment (Staging): staging.example.com from \(directory.path)/Environments.plist:14 [Staging]"
            ), "\(set.output)")
        let get = try Self.envctl(["get", "APIHost", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.output == "api.other.example\n")
    }

    @Test("an APP_ variable outweighs every file: the write is refused, naming the variable")
    func setShadowedByAVariable() throws {
        let directory = try Directory()
        let set = try Self.envctl(
            ["set", "LogLevel", "debug", "--config-dir", directory.path], environment: ["APP_LogLevel": "error"])
        #expect(set.status == 1, "\(set.output)")
        #expect(set.output.contains("the value in effect is error from $APP_LogLevel"), "\(set.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.dropIn))
    }

    @Test("a secret in effect elsewhere is named, never shown")
    func shadowingSecretIsRedacted() throws {
        let directory = try Directory(plist: examplePlist(secrets: ["Token"]))
        try Self.writeDropIn(
            "95-secrets", in: directory, [("Common", "<key>Token</key><string>hidden-token-value</string>")])
        let set = try Self.envctl(["set", "Token", "mine", "--config-dir", directory.path])
        #expect(set.status == 1, "\(set.output)")
        #expect(set.output.contains("the value in effect is <redacted> from"), "\(set.output)")
        #expect(!set.output.contains("hidden-token-value"))
    }

    @Test("unset of a value in effect nowhere changes nothing: refused unless --allow-shadowed")
    func unsetWithoutEffect() throws {
        let directory = try Directory()
        try Self.writeDropIn("90-local", in: directory, [("Common", "<key>LogLevel</key><string>debug</string>")])
        try Self.writeDropIn("95-ops", in: directory, [("Common", "<key>LogLevel</key><string>warning</string>")])
        let before = try directory.contents()
        let unset = try Self.envctl(["unset", "LogLevel", "--config-dir", directory.path])
        #expect(unset.status == 1, "\(unset.output)")
        #expect(
            unset.output.contains(
                "removing Common.LogLevel from \(directory.dropIn) changes no value in effect, since it was in effect in no environment: in every environment (Staging), warning from \(directory.path)/Environments.plist.d/95-ops.plist:6 [Common] outweighs it"
            ), "\(unset.output)")
        #expect(unset.output.contains("95-ops.plist:6 [Common]"), "\(unset.output)")
        #expect(try directory.contents() == before)
        let allowed = try Self.envctl(["unset", "LogLevel", "--allow-shadowed", "--config-dir", directory.path])
        #expect(allowed.status == 0, "\(allowed.output)")
        // A value in effect: removed without a word.
        let set = try Self.envctl(["set", "HeartbeatInterval", "2s", "--config-dir", directory.path])
        #expect(set.status == 0, "\(set.output)")
        let removed = try Self.envctl(["unset", "HeartbeatInterval", "--config-dir", directory.path])
        Self.expectTakesEffect(removed)
    }

    @Test("an edit whose value a later drop-in outweighs is not installed; its copy is kept")
    func editShadowed() throws {
        let directory = try Directory()
        try Self.writeDropIn("95-ops", in: directory, [("Common", "<key>LogLevel</key><string>warning</string>")])
        let editor = try scriptedEditor(in: directory)
        defer { unlink(editor) }
        let edited = directory.path + "/../edited-\(UUID().uuidString.prefix(8)).plist"
        defer { unlink(edited) }
        try Self.write(Self.dropIn([("Common", "<key>LogLevel</key><string>debug</string>")]), to: edited)
        let before = try directory.contents()
        let refused = try Self.envctl(
            ["edit", "--config-dir", directory.path], environment: ["VISUAL": editor, "NEW_CONTENTS": edited])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("does not take effect"), "\(refused.output)")
        #expect(refused.output.contains("95-ops.plist:6 [Common]"), "\(refused.output)")
        #expect(refused.output.contains("your rejected version is kept in"), "\(refused.output)")
        #expect(try directory.contents() == before)
        let kept = refused.output.components(separatedBy: "your rejected version is kept in ").dropFirst().first?
            .components(separatedBy: " ").first
        if let kept { try? FileManager.default.removeItem(atPath: (kept as NSString).deletingLastPathComponent) }

        let allowed = try Self.envctl(
            ["edit", "--allow-shadowed", "--config-dir", directory.path],
            environment: ["VISUAL": editor, "NEW_CONTENTS": edited])
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(allowed.output.contains("note: Common.LogLevel"), "\(allowed.output)")
    }

    @Test("an existing 50-local.plist of an earlier envctl stays read; set says so and writes 90-local")
    func formerDefaultDropIn() throws {
        let directory = try Directory()
        let former = try Self.writeDropIn(
            "50-local", in: directory, [("Common", "<key>HeartbeatInterval</key><string>3s</string>")])
        let set = try Self.envctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("note: \(former), the default drop-in of earlier envctl releases"), "\(set.output)")
        #expect(set.output.contains("--drop-in 50-local"), "\(set.output)")
        #expect(FileManager.default.fileExists(atPath: directory.dropIn))
        // A key only the former default sets: the message says where it is.
        let unset = try Self.envctl(["unset", "HeartbeatInterval", "--config-dir", directory.path])
        #expect(unset.status == 1, "\(unset.output)")
        #expect(unset.output.contains("pass --drop-in 50-local to change it"), "\(unset.output)")
        let there = try Self.envctl([
            "unset", "HeartbeatInterval", "--drop-in", "50-local", "--config-dir", directory.path,
        ])
        #expect(there.status == 0, "\(there.output)")
        // Once 90-local is there, no more notes.
        let again = try Self.envctl(["set", "LogLevel", "info", "--config-dir", directory.path])
        Self.expectTakesEffect(again)
    }

    @Test("the running daemon's APP_ variable outweighs the write: refused, naming it")
    func daemonVariable() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try Environment(
            options: EnvironmentOptions(
                applicationName: "control-tests", environment: "Production", configDirectory: fixture.root + "/etc",
                processEnvironment: [
                    "CREDENTIALS_DIRECTORY": fixture.root + "/credentials", "APP_Greeting": "from-variable",
                ]))
        try await fixture.service(environment).whileRunning {
            let set = try await onThread {
                try Self.envctl(["set", "Greeting", "hi", "--socket", fixture.socket])
            }
            #expect(set.status == 1, "\(set.output)")
            #expect(
                set.output.contains(
                    "in every environment (Production), the value in effect is set by $APP_Greeting in the running daemon"
                ),
                "\(set.output)")
            #expect(!FileManager.default.fileExists(atPath: fixture.root + "/etc/Environments.plist.d/90-local.plist"))
            let other = try await onThread {
                // The shell's own APP_ variable is not the daemon's: it does not count.
                try Self.envctl(
                    ["set", "ListenPort", "9000", "--type", "integer", "--socket", fixture.socket],
                    environment: ["APP_ListenPort": "1"])
            }
            #expect(other.status == 0, "\(other.output)")
        }
    }
}
