import EnvironmentsControl
import Foundation
import TestSupport
import Testing

/// `envctl set`, `unset` and `edit`: a drop-in changes only after the whole resulting
/// configuration checked out (the files for every environment, and a running daemon's own
/// validation); on any error every file stays byte for byte as it was.
@Suite(.serialized, .blocking) struct EnvctlEditingTests {
    @Test func setWritesTypedValuesAndUnsetRemovesThem() throws {
        let directory = try ExampleConfigurationDirectory()
        let set = try runEnvctl(["set", "ListenPort", "9000", "--type", "integer", "--config-dir", directory.path])
        #expect(set.status == 0, "\(set.output)")
        let staging = try runEnvctl([
            "set", "Database.Host", "db.staging", "--environment", "Staging", "--drop-in", "60-staging.plist",
            "--config-dir", directory.path,
        ])
        #expect(staging.status == 0, "\(staging.output)")
        let flag = try runEnvctl(["set", "Features.Beta", "yes", "--type", "bool", "--config-dir", directory.path])
        #expect(flag.status == 0, "\(flag.output)")

        let root = try #require(
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: URL(fileURLWithPath: directory.dropIn)), format: nil) as? [String: Any])
        let common = try #require(root["Common"] as? [String: Any])
        #expect(common["ListenPort"] as? Int == 9000)
        #expect((common["Features"] as? [String: Any])?["Beta"] as? Bool == true)
        let get = try runEnvctl(["get", "Database.Host", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.output == "db.staging\n", "\(get.output)")

        let unset = try runEnvctl(["unset", "ListenPort", "Features.Beta", "--config-dir", directory.path])
        #expect(unset.status == 0, "\(unset.output)")
        let after = try #require(
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: URL(fileURLWithPath: directory.dropIn)), format: nil) as? [String: Any])
        // Emptied dictionaries go too.
        #expect(after["Common"] == nil)
    }

    @Test("set echoes the value it wrote, but never a secret's")
    func setDoesNotEchoASecret() throws {
        let directory = try ExampleConfigurationDirectory(plist: examplePlist(secrets: ["Database"]))
        let secret = try directory.setSecret("Database.Password")
        // The value is in the drop-in all the same.
        #expect(try String(contentsOfFile: directory.dropIn, encoding: .utf8).contains(secret))
        let plain = try runEnvctl(["set", "APIHost", "api.other.example.com", "--config-dir", directory.path])
        #expect(plain.output.contains("Common.APIHost = api.other.example.com"), "\(plain.output)")
    }

    @Test(arguments: [
        (["set", "LogLevel", "loud"], "'LogLevel' is 'loud', expected one of"),
        (["set", "ListenPort", "ninety", "--type", "integer"], "'ninety' is not an integer"),
        (["set", "APIHost.Name", "x"], "'APIHost' is a string"),
        (["set", "Database..Host", "x"], "is not a valid key path"),
        (["set", "X", "1", "--type", "float"], "The value 'float' is invalid for '--type <type>'"),
        (["set", "X", "1", "--common", "--environment", "Staging"], "not both"),
        (["unset", "NotSet"], "does not exist; nothing to unset"),
        (["set", "X", "1", "--drop-in", "../escape"], "drop-in name '../escape' (from --drop-in) cannot be used"),
    ])
    func badInputIsRefusedAndNothingChanges(arguments: [String], message: String) throws {
        let directory = try ExampleConfigurationDirectory()
        let before = try directory.contents()
        let result = try runEnvctl(arguments + ["--config-dir", directory.path])
        #expect(result.status != 0)
        #expect(result.output.contains(message), "\(result.output)")
        #expect(try directory.contents() == before)
    }

    @Test func editInstallsAValidResultAndKeepsAnInvalidOneWithoutATerminal() throws {
        let directory = try ExampleConfigurationDirectory()
        let editor = try scriptedEditor(in: directory)
        defer { unlink(editor) }
        let good = directory.path + "/../good-\(UUID().uuidString.prefix(8)).plist"
        let bad = directory.path + "/../bad-\(UUID().uuidString.prefix(8)).plist"
        defer {
            unlink(good)
            unlink(bad)
        }
        try plistDocument(
            """
            \t<key>Common</key>
            \t<dict><key>LogLevel</key><string>debug</string></dict>
            """
        ).write(toFile: good, atomically: true, encoding: .utf8)
        try plistDocument(
            """
            \t<key>Common</key>
            \t<dict><key>LogLevel</key><string>debug</string>
            """
        ).write(toFile: bad, atomically: true, encoding: .utf8)

        let before = try directory.contents()
        let refused = try runEnvctl(
            ["edit", "--config-dir", directory.path], environment: ["EDITOR": editor, "NEW_CONTENTS": bad])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(try directory.contents() == before)
        // No terminal to edit again on: the rejected text is kept, private, and the error's line
        // is the kept file's, which holds it.
        let kept = try #require(
            refused.output.components(separatedBy: "your rejected version is kept in ").dropFirst().first?
                .components(separatedBy: " ").first, "\(refused.output)")
        defer { try? FileManager.default.removeItem(atPath: (kept as NSString).deletingLastPathComponent) }
        #expect(kept.hasSuffix("/90-local.plist") && !kept.hasPrefix(directory.path), "\(kept)")
        #expect(refused.output.contains("\(kept):7:"), "\(refused.output)")
        #expect(!refused.output.contains("Environments.plist.d/90-local.plist:7:"), "\(refused.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == Data(contentsOf: URL(fileURLWithPath: bad)))
        var status = stat()
        #expect(stat(kept, &status) == 0 && status.st_mode & 0o777 == 0o600 && status.st_uid == geteuid())
        // Fixed there, the command the error gives installs it.
        #expect(refused.output.contains("VISUAL='cp -- \(kept)' envctl edit --config-dir \(directory.path)"))
        try FileManager.default.removeItem(atPath: kept)
        try FileManager.default.copyItem(atPath: good, toPath: kept)
        let reinstalled = try runEnvctl(
            ["edit", "--config-dir", directory.path], environment: ["EDITOR": "cp -- \(kept)"])
        #expect(reinstalled.status == 0, "\(reinstalled.output)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: directory.dropIn)) == Data(contentsOf: URL(fileURLWithPath: good))
        )
        try FileManager.default.removeItem(atPath: directory.dropIn)

        let unchanged = try runEnvctl(["edit", "--config-dir", directory.path], environment: ["EDITOR": "true"])
        #expect(unchanged.status == 0 && unchanged.output.contains("no changes"), "\(unchanged.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.dropIn))

        let failedEditor = try runEnvctl(["edit", "--config-dir", directory.path], environment: ["EDITOR": "false"])
        #expect(
            failedEditor.status == 1 && failedEditor.output.contains("exited with status 1"), "\(failedEditor.output)")

        let installed = try runEnvctl(
            ["edit", "--config-dir", directory.path], environment: ["EDITOR": editor, "NEW_CONTENTS": good])
        #expect(installed.status == 0, "\(installed.output)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: directory.dropIn)) == Data(contentsOf: URL(fileURLWithPath: good))
        )
        let get = try runEnvctl(["get", "LogLevel", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.output == "debug\n", "\(get.output)")
    }

    @Test("a running daemon's own validation decides, and its watcher applies what was installed")
    func theRunningDaemonChecksTheChange() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let before = try Data(contentsOf: daemon.mainFile)
        // The files alone accept it; the example daemon's validation (http or https) does not.
        let refused = try daemon.envctl(["set", "APIBaseUrl", "ftp://files.example.com", "--pid", String(daemon.pid)])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("the running daemon rejects it"), "\(refused.output)")
        #expect(refused.output.contains("is not a URL with the scheme http or https"), "\(refused.output)")
        let dropIns = daemon.configDirectory.appendingPathComponent("Environments.plist.d").path
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? []).isEmpty)
        #expect(try Data(contentsOf: daemon.mainFile) == before)

        let accepted = try daemon.envctl(["set", "APIHost", "edited.example.com", "--pid", String(daemon.pid)])
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.output.contains("by the running daemon (environment Staging)"), "\(accepted.output)")
        // Installed in the daemon's own directory, and applied by its watcher.
        #expect(FileManager.default.fileExists(atPath: dropIns + "/90-local.plist"))
        #expect(daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 2") } != nil)
        let get = try daemon.envctl(["get", "APIBaseUrl", "--pid", String(daemon.pid)])
        #expect(get.output == "https://edited.example.com/v1\n", "\(get.output)")
    }

    /// tmux with a socket of its own, driving a real `vi` in a real terminal.
    final class Terminal {
        let socket: String
        let session = "envctl"

        init(command: String) throws {
            socket = NSTemporaryDirectory() + "envctl-tmux-\(UUID().uuidString.prefix(8))"
            // Spawned directly, with every descriptor but the standard ones closed: the server
            // this starts would otherwise inherit the descriptor through which Foundation's
            // `Process` learns that its child ended, and the pipes of processes that other tests
            // run meanwhile, so their `waitUntilExit` and reads would wait for the server.
            let arguments = [
                "/usr/bin/tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "120", "-y",
                "40", command,
            ]
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { for argument in argv { free(argument) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            // glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module
            // does not import.
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
            let closeFrom = try #require(
                dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np"))
            guard unsafeBitCast(closeFrom, to: CloseFrom.self)(&actions, 3) == 0 else { throw POSIXError(.EINVAL) }
            var pid = pid_t()
            guard posix_spawn(&pid, "/usr/bin/tmux", &actions, nil, &argv, environ) == 0 else {
                throw POSIXError(.ENOEXEC)
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }

        deinit {
            _ = try? Self.tmux(quiet: true, ["-S", socket, "kill-server"])
            unlink(socket)
        }

        @discardableResult
        static func tmux(quiet: Bool = false, _ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = quiet ? FileHandle(forWritingAtPath: "/dev/null") : pipe
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            let data = quiet ? Data() : readToEnd(pipe.fileHandleForReading)
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }

        /// What the terminal shows.
        func screen() -> String { (try? Self.tmux(["-S", socket, "capture-pane", "-p", "-t", session])) ?? "" }

        /// Waits (at most 20 s) until the screen shows `text` (at least `count` times).
        func waitFor(_ text: String, count: Int = 1) throws -> Bool {
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                if screen().components(separatedBy: text).count > count { return true }
                usleep(50_000)
            }
            return false
        }

        /// Types `keys` literally.
        func type(_ keys: String) throws {
            try Self.tmux(quiet: true, ["-S", socket, "send-keys", "-t", session, "-l", keys])
        }
        /// Presses named keys (`Enter`, `Escape`).
        func press(_ keys: String...) throws {
            try Self.tmux(quiet: true, ["-S", socket, "send-keys", "-t", session] + keys)
        }
        /// Types `keys` literally, then presses Enter: a vi command line, a search, an answer.
        func enter(_ keys: String) throws {
            try type(keys)
            try press("Enter")
        }
    }

    /// The exit status the terminal's shell wrote after envctl ended (at most 20 s).
    static func waitForStatus(_ path: String) -> String? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") {
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            usleep(50_000)
        }
        return nil
    }

    @Test func editInARealTerminalWithVi() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"),
            "tmux is needed (scripts/test.sh installs it)")
        #expect(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/vi"), "vi is needed (scripts/test.sh installs it)")
        let directory = try ExampleConfigurationDirectory()
        let status = directory.path + "/../status-\(UUID().uuidString.prefix(8))"
        defer { unlink(status) }
        let command =
            "env -u VISUAL EDITOR=vi TERM=xterm \(BuiltProducts.envctl) edit --config-dir \(directory.path); "
            + "echo $? > \(status); sleep 60"

        // A new drop-in from the template: add a setting after its <dict> line, save.
        do {
            let terminal = try Terminal(command: command)
            #expect(try terminal.waitFor("Applied after Environments.plist"), "\(terminal.screen())")
            try terminal.enter("/^<dict>")
            try terminal.type("o<key>Common</key><dict><key>LogLevel</key><string>debug</string></dict>")
            try terminal.press("Escape")
            try terminal.enter(":wq")
            #expect(try terminal.waitFor("installed"), "\(terminal.screen())")
            #expect(Self.waitForStatus(status) == "0")
        }
        let installed = try Data(contentsOf: URL(fileURLWithPath: directory.dropIn))
        let get = try runEnvctl(["get", "LogLevel", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.output == "debug\n", "\(get.output)")

        // Break it: the error with its line, edit again (quit without fixing), then discard.
        unlink(status)
        do {
            let terminal = try Terminal(command: command)
            #expect(try terminal.waitFor("LogLevel"), "\(terminal.screen())")
            try terminal.enter("/^<\\/dict>")
            try terminal.enter("dd:wq")
            #expect(try terminal.waitFor("edit again?"), "\(terminal.screen())")
            #expect(terminal.screen().contains("90-local.plist:"), "\(terminal.screen())")
            try terminal.enter("y")
            #expect(try terminal.waitFor("LogLevel"), "\(terminal.screen())")
            try terminal.enter(":q")
            // Still invalid: asked again; this time discard.
            #expect(try terminal.waitFor("edit again?", count: 2), "\(terminal.screen())")
            try terminal.enter("n")
            #expect(try terminal.waitFor("discarded"), "\(terminal.screen())")
            #expect(Self.waitForStatus(status) == "1")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.dropIn)) == installed)
    }
}
