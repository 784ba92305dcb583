import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import JSONText
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// Paths mean what they say, through the real daemon and envctl: a relative `--config-dir` is
/// the daemon's directory wherever envctl runs; a name that becomes a path (an instance, an
/// application name, a drop-in) cannot lead anywhere else; a clean stop leaves no state file.
@Suite("Paths and names", .blocking)
struct PathsAndNamesTests {
    /// Every path under `directory`, relative to it: what must not grow after a refused name.
    static func tree(_ directory: URL) -> Set<String> {
        var paths: Set<String> = []
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let relative = enumerator?.nextObject() as? String { paths.insert(relative) }
        return paths
    }

    /// `realpath(3)`.
    static func real(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Hostile names: each is refused, by each way in.
    static let hostileNames: [(name: String, problem: String)] = [
        ("../x", "holds '/'"), ("a/b", "holds '/'"), ("..", "names a directory"), (".", "names a directory"),
        ("", "it is empty"), ("a\nb", "control character"), ("\u{1B}[31mred", "control character"),
        ("tab\there", "control character"), ("sp ace", "holds ' '"), ("é", "outside ASCII"),
        (String(repeating: "a", count: 300), "300 bytes long"),
    ]

    @Test("a relative --config-dir is the daemon's directory: envctl set from elsewhere writes there, not into a decoy")
    func relativeConfigDirectory() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        // The daemon runs in root with `--config-dir etc`; envctl runs in root/elsewhere, which
        // holds a decoy `etc` with a configuration of its own.
        let elsewhere = daemon.root.appendingPathComponent("elsewhere")
        let decoy = elsewhere.appendingPathComponent("etc")
        try FileManager.default.createDirectory(at: decoy, withIntermediateDirectories: true)
        try examplePlist(apiHost: "decoy.example.com").write(
            to: decoy.appendingPathComponent("Environments.plist"), atomically: true, encoding: .utf8)
        let decoyBefore = Self.tree(decoy)
        try daemon.start(configDirectoryArgument: "etc", currentDirectory: daemon.root)
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })

        // Describe, the state file: absolute, the daemon's own directory.
        let client = VarlinkClient(path: daemon.runtimeDirectory.appendingPathComponent("configuration.varlink").path)
        let reply = try client.call(VarlinkCall(method: ControlInterface.Method.describe.qualifiedName))
        let described = try #require(reply.parameters?["configDirectory"]?.stringValue)
        #expect(described.hasPrefix("/"), "\(described)")
        #expect(Self.real(described) == Self.real(daemon.configDirectory.path))
        let state = try ReloadState.read(from: daemon.stateFile)
        #expect(state.configDirectory.map { Self.real($0) } == Self.real(daemon.configDirectory.path))
        #expect(state.resolvedDirectory?.hasPrefix("/") == true)
        #expect(state.files.allSatisfy { $0.hasPrefix("/") }, "\(state.files)")

        let set = try daemon.envctl(
            ["set", "APIHost", "changed.example.com", "--pid", String(daemon.pid)], currentDirectory: elsewhere)
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("by the running daemon"), "\(set.output)")
        // Written in the daemon's directory, applied by it; the decoy untouched.
        let dropIn = daemon.configDirectory.appendingPathComponent("Environments.plist.d/90-local.plist")
        #expect(try String(contentsOf: dropIn, encoding: .utf8).contains("changed.example.com"))
        #expect(Self.tree(decoy) == decoyBefore)
        #expect(daemon.waitForLog("APIBaseUrl=https://changed.example.com/v1"))

        // diff --running from there compares with the daemon's files, not the decoy's.
        let diff = try daemon.envctl(["diff", "--running", "--pid", String(daemon.pid)], currentDirectory: elsewhere)
        #expect(diff.output.hasSuffix("# no differences\n"), "\(diff.output)")
        #expect(!diff.output.contains("decoy"), "\(diff.output)")

        // --config-dir naming another directory than the daemon's is refused, naming both.
        for command in [["set", "APIHost", "x.example.com"], ["unset", "APIHost"], ["diff", "--running"], ["show"]] {
            let refused = try daemon.envctl(
                command + ["--pid", String(daemon.pid), "--config-dir", "etc"], currentDirectory: elsewhere)
            // diff says trouble with 2, as diff(1) does (1 means "different").
            #expect(refused.status == (command[0] == "diff" ? 2 : 1), "\(command): \(refused.output)")
            #expect(refused.output.contains("is not the directory the running daemon reads"), "\(refused.output)")
            #expect(refused.output.contains("elsewhere/etc"), "\(refused.output)")
            #expect(refused.output.contains(described), "\(refused.output)")
        }
        #expect(Self.tree(decoy) == decoyBefore)
        // The same directory by another name (relative, from the daemon's own directory) is fine.
        let same = try daemon.envctl(
            ["set", "APIHost", "again.example.com", "--pid", String(daemon.pid), "--config-dir", "etc/."],
            currentDirectory: daemon.root)
        #expect(same.status == 0, "\(same.output)")
        #expect(daemon.waitForLog("APIBaseUrl=https://again.example.com/v1"))
    }

    @Test("a daemon found by --app-name: every subcommand reads the directory it was started with, not /etc/NAME")
    func daemonFoundByApplicationName() throws {
        // The conventional socket of example-daemon's instance: /run/example-daemon/<instance>/
        // for root, else $XDG_RUNTIME_DIR/example-daemon/<instance>/. A fresh instance, so that
        // nothing else's daemon answers; no $RUNTIME_DIRECTORY, so only the name finds it.
        let instance = "paths-\(UUID().uuidString.prefix(8).lowercased())"
        let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "envd-xdg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let daemon = try DaemonHarness(
            plist: examplePlist(apiHost: "own.example.com"), extraEnvironment: ["XDG_RUNTIME_DIR": root.path],
            unsetEnvironment: ["RUNTIME_DIRECTORY"])
        let runtime =
            geteuid() == 0 ? "/run/example-daemon/\(instance)" : root.path + "/example-daemon/\(instance)"
        defer {
            try? FileManager.default.removeItem(atPath: runtime)
            rmdir((runtime as NSString).deletingLastPathComponent)  // only when empty
        }
        try daemon.start(arguments: ["--environment", "Staging", "--instance", instance])
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        #expect(FileManager.default.fileExists(atPath: runtime + "/configuration.varlink"))
        let name = ["--app-name", "example-daemon", "--instance", instance]
        let files = name + ["--environment", "Staging"]

        // Reading files for the daemon: its directory, as Describe says.
        let shown = try daemon.envctl(["show"] + files)
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.output.contains("# from the files in \(daemon.configDirectory.path)"), "\(shown.output)")
        #expect(shown.output.contains("APIHost") && shown.output.contains("own.example.com"), "\(shown.output)")
        let got = try daemon.envctl(["get", "APIHost"] + files)
        #expect(got.output == "own.example.com\n", "\(got.output)")
        let checked = try daemon.envctl(["check"] + files)
        #expect(checked.status == 0, "\(checked.output)")
        #expect(checked.output.contains(daemon.configDirectory.path), "\(checked.output)")
        let diff = try daemon.envctl(["diff", "--running"] + name)
        #expect(diff.status == 0, "\(diff.output)")
        #expect(diff.output.hasSuffix("# no differences\n"), "\(diff.output)")
        let environments = try daemon.envctl(["diff", "Staging", "Staging"] + name)
        #expect(environments.status == 0, "\(environments.output)")
        // Asking the daemon itself.
        let fromDaemon = try daemon.envctl(["show"] + name)
        #expect(fromDaemon.output.hasPrefix("# from the running daemon, pid \(daemon.pid)"), "\(fromDaemon.output)")
        // Changing: in its directory, and applied by it.
        let set = try daemon.envctl(["set", "APIHost", "changed.example.com"] + name)
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains(daemon.configDirectory.path), "\(set.output)")
        #expect(daemon.waitForLog("APIBaseUrl=https://changed.example.com/v1"))
        for output in [shown.output, got.output, checked.output, diff.output, set.output] {
            #expect(!output.contains("/etc/example-daemon"), "\(output)")
        }
    }

    @Test(
        "a hostile --instance or $APP_INSTANCE stops the daemon at start; nothing is made outside its runtime directory"
    )
    func hostileInstanceForTheDaemon() throws {
        for (name, problem) in Self.hostileNames {
            for viaVariable in [false, true] where !(viaVariable && name.isEmpty) {
                // No $RUNTIME_DIRECTORY: the socket would go to $XDG_RUNTIME_DIR/example-daemon/<instance>/.
                let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
                    "envd-xdg-\(UUID().uuidString.prefix(8))")
                let xdg = root.appendingPathComponent("xdg/a/b")
                try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: root) }
                let daemon = try DaemonHarness(
                    plist: examplePlist(),
                    extraEnvironment: ["XDG_RUNTIME_DIR": xdg.path].merging(
                        viaVariable ? ["APP_INSTANCE": name] : [:]
                    ) { _, new in new },
                    unsetEnvironment: ["RUNTIME_DIRECTORY"])
                try daemon.start(arguments: ["--environment", "Staging"] + (viaVariable ? [] : ["--instance", name]))
                let status = daemon.waitForExit()
                #expect(status == 1, "\(name.debugDescription): \(daemon.log)")
                #expect(
                    daemon.log.contains(viaVariable ? "(from $APP_INSTANCE)" : "(from the instance option"),
                    "\(daemon.log)")
                #expect(daemon.log.contains(problem), "\(name.debugDescription): \(daemon.log)")
                #expect(daemon.log.contains("systemd's rule"), "\(daemon.log)")
                #expect(Self.tree(root) == ["xdg", "xdg/a", "xdg/a/b"], "\(name.debugDescription)")
            }
        }
    }

    @Test("a hostile --app-name, --instance or $APP_INSTANCE is refused by envctl, which makes nothing")
    func hostileNamesForEnvctl() throws {
        let daemon = try DaemonHarness(plist: examplePlist(), unsetEnvironment: ["RUNTIME_DIRECTORY"])
        let xdg = daemon.root.appendingPathComponent("xdg")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        let before = Self.tree(daemon.root)
        for (name, problem) in Self.hostileNames {
            let cases: [(arguments: [String], environment: [String: String], origin: String)] = [
                (["show", "--app-name", name], [:], "(from --app-name)"),
                (["set", "X", "1", "--app-name", name], [:], "(from --app-name)"),
                (["reload", "--app-name", name], [:], "(from --app-name)"),
                (["show", "--app-name", "example-daemon", "--instance", name], [:], "(from --instance)"),
                (
                    ["get", "X", "--config-dir", daemon.configDirectory.path, "--instance", name], [:],
                    "(from --instance)"
                ),
                (
                    ["set", "X", "1", "--config-dir", daemon.configDirectory.path, "--instance", name], [:],
                    "(from --instance)"
                ),
                (["show", "--app-name", "example-daemon"], ["APP_INSTANCE": name], "(from $APP_INSTANCE)"),
                (
                    ["check", "--config-dir", daemon.configDirectory.path], ["APP_INSTANCE": name],
                    "(from $APP_INSTANCE)"
                ),
            ]
            for (arguments, environment, origin) in cases where !(name.isEmpty && environment["APP_INSTANCE"] != nil) {
                let result = try daemon.envctl(
                    arguments, extraEnvironment: environment.merging(["XDG_RUNTIME_DIR": xdg.path]) { _, new in new })
                #expect(result.status == 1, "\(arguments) \(name.debugDescription): \(result.output)")
                #expect(result.output.contains(origin), "\(arguments): \(result.output)")
                #expect(result.output.contains(problem), "\(arguments) \(name.debugDescription): \(result.output)")
                #expect(result.output.split(separator: "\n").count == 1, "\(result.output)")
            }
        }
        #expect(Self.tree(daemon.root) == before)
    }

    @Test("a hostile --drop-in is refused, and nothing is written anywhere")
    func hostileDropIn() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let before = Self.tree(daemon.root)
        let names =
            Self.hostileNames + [
                (".hidden", "starts with '.'"), (".plist", "it is empty"), ("../../x.plist", "holds '/'"),
                (String(repeating: "b", count: 229), "229 bytes long"),
            ]
        for (name, problem) in names {
            for command in [["set", "X", "1"], ["unset", "X"], ["edit"]] {
                let result = try daemon.envctl(command + ["--drop-in", name, "--pid", String(daemon.pid)])
                #expect(result.status == 1, "\(command) \(name.debugDescription): \(result.output)")
                #expect(result.output.contains("(from --drop-in)"), "\(result.output)")
                #expect(result.output.contains(problem), "\(name.debugDescription): \(result.output)")
            }
        }
        // The longest name that fits, and one with every allowed kind of character, are taken.
        // (A key each: the same key in two drop-ins would be in effect from the later one only.)
        for (index, name) in [String(repeating: "c", count: 228), "60-a_b:c.d@e\\f"].enumerated() {
            let result = try daemon.envctl([
                "set", "X\(index)", "1", "--drop-in", name, "--pid", String(daemon.pid), "--allow-undeclared",
            ])
            #expect(result.status == 0, "\(name): \(result.output)")
        }
        // The daemon's runtime directory aside: it rewrites its state file (through a temporary
        // file beside it) after each reload the new drop-ins cause, whenever that happens.
        let after = Self.tree(daemon.root).subtracting(before).filter { !$0.hasPrefix("run/") }
        #expect(after.allSatisfy { $0.hasPrefix("etc/Environments.plist.d") }, "\(after)")
    }

    @Test("SIGTERM removes the state file with the socket; after a crash envctl says the state file is stale")
    func stateFileOnStop() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let state = try ReloadState.read(from: daemon.stateFile)
        #expect(state.pid == daemon.pid)
        #expect(state.processStartTime != nil)
        #expect(state.bootID != nil)
        let socket = daemon.runtimeDirectory.appendingPathComponent("configuration.varlink").path
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.stateFile))
        #expect(!FileManager.default.fileExists(atPath: socket))

        // A crash leaves both; envctl tells the state file is stale, naming the process.
        let crashed = try DaemonHarness(plist: examplePlist())
        try crashed.start()
        _ = try #require(crashed.waitForDatagram { $0.contains("READY=1") })
        let pid = crashed.pid
        crashed.signal(SIGKILL)
        _ = crashed.waitForExit()
        #expect(FileManager.default.fileExists(atPath: crashed.stateFile))
        let crashedSocket = crashed.runtimeDirectory.appendingPathComponent("configuration.varlink").path
        let show = try crashed.envctl(["show", "--socket", crashedSocket])
        #expect(show.status == 1, "\(show.output)")
        #expect(show.output.contains("environment-state.json is stale: process \(pid)"), "\(show.output)")
        let reload = try crashed.envctl(["reload", "--pid", String(pid)])
        #expect(reload.status == 1, "\(reload.output)")
        #expect(reload.output.contains("is stale: process \(pid)"), "\(reload.output)")
    }

    @Test(
        "a daemon run as a user with no runtime directory says what to set, and serves on without a socket",
        .enabled(if: getuid() == 0 && !FileManager.default.fileExists(atPath: "/run/user/65534")))
    func userWithoutRuntimeDirectory() throws {
        // Neither $RUNTIME_DIRECTORY nor $XDG_RUNTIME_DIR, no /run/user/65534, and /run/NAME not
        // its own: before, "cannot bind /run/NAME/configuration.varlink: Permission denied".
        let daemon = try DaemonHarness(
            plist: examplePlist(apiHost: "user.example.com"),
            unsetEnvironment: ["RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR"])
        try daemon.start(user: 65534)
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        #expect(daemon.waitForLog("no runtime directory for the control socket"), "\(daemon.log)")
        #expect(daemon.log.contains("$RUNTIME_DIRECTORY or $XDG_RUNTIME_DIR"), "\(daemon.log)")
        #expect(!daemon.log.contains("Permission denied"), "\(daemon.log)")
        #expect(daemon.process?.isRunning == true)
    }
}
