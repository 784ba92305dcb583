import EnvironmentsControl
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// envctl trusts only the daemon it means to reach (issue 44): whatever finds the daemon
/// (`--pid`, `--socket`, `--app-name`, `$RUNTIME_DIRECTORY`), a process that listens where the
/// daemon should but runs as a user envctl does not trust, or listens in a directory others can
/// write, is sent nothing and nothing is written; the configuration directory a daemon reports
/// is used only when envctl trusts it too. Against the built envctl, real listening sockets
/// (Python's, as root or as `nobody` through `setpriv`) and the built example daemon. Serialized:
/// a login's runtime directory (`/run/user/65534`) is one for all its cases.
@Suite(
    "envctl trusts only the daemon it means to reach", .blocking, .serialized,
    .enabled(if: geteuid() == 0, "makes directories in /run and runs processes as nobody (the tests run as root)"),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")),
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
struct EnvctlPeerTrustTests {
    /// The user an impostor runs as: `nobody`.
    static let nobody: UInt32 = 65534
    /// In the drop-in an impostor must never see.
    static let secret = "root-only-Secret-Cobalt-17"

    /// A process that listens on a control socket's path and is not the daemon there: it
    /// answers `Describe` (reporting `directory` as its configuration directory) and `Check`
    /// (accepting), and writes each message it receives to a file of its own, a line each, so
    /// that a test can tell what envctl sent it.
    final class Impostor {
        let process = Process()
        let output = Pipe()
        /// Where it writes what it receives.
        let record: String

        static let script = """
            import json, socket, sys
            path, directory, record = sys.argv[1], sys.argv[2], open(sys.argv[3], "a")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            listener.listen(16)
            print("listening", flush=True)
            describe = {"applicationName": "impostor", "environment": "Production", "configDirectory": directory,
                        "generation": 1, "files": [], "loadedAt": "2026-11-28T00:00:00Z", "settings": [],
                        "pendingRestart": []}
            check = {"environment": "Production", "generation": 1, "changedKeys": [], "pendingRestart": []}
            while True:
                connection, _ = listener.accept()
                buffer = b""
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    buffer += chunk
                    while b"\\0" in buffer:
                        message, buffer = buffer.split(b"\\0", 1)
                        record.write(message.decode(errors="replace").replace("\\n", " ") + "\\n")
                        record.flush()
                        method = json.loads(message).get("method", "")
                        if method.endswith(".Describe"):
                            reply = {"parameters": describe}
                        elif method.endswith(".Check"):
                            reply = {"parameters": check}
                        else:
                            reply = {"error": "org.varlink.service.MethodNotImplemented", "parameters": {}}
                        connection.sendall(json.dumps(reply).encode() + b"\\0")
                connection.close()
            """

        /// Starts listening on `socket` as `user` (`nil`: root, this process's user), recording in
        /// a new file of `place`; returns once it listens.
        init(socket: String, reporting directory: String, user: UInt32?, in place: Place) throws {
            record = place.root + "/received-\(UUID().uuidString.prefix(8))"
            guard FileManager.default.createFile(atPath: record, contents: nil), chmod(record, 0o666) == 0 else {
                throw POSIXError(.EIO)
            }
            if let user {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = [
                    "--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/python3", "-c", Self.script,
                    socket, directory, record,
                ]
            } else {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
                process.arguments = ["-c", Self.script, socket, directory, record]
            }
            // No runtime directory to name: `--pid` finds the socket it listens on.
            process.environment = ["PATH": "/usr/bin:/bin"]
            process.standardOutput = output
            try process.run()
            var said = Data()
            while !String(decoding: said, as: UTF8.self).contains("listening\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { throw POSIXError(.ECONNREFUSED) }
                said += chunk
            }
        }

        var pid: Int32 { process.processIdentifier }

        /// Stops it (`SIGKILL`: the test process may block `SIGTERM`, and its children inherit
        /// that); the messages it received, each as it came.
        func stop() -> [String] {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let text = (try? String(contentsOfFile: record, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init)
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// A temporary root (`/tmp/envctl-trust-XXXXXXXX`, root's, 0755) with a configuration
    /// directory `etc` whose drop-in `50-secret.plist` (0600) holds ``secret``, and the
    /// directories the test made below `/run`, removed afterwards.
    final class Place {
        let root = NSTemporaryDirectory() + "envctl-trust-\(UUID().uuidString.prefix(8))"
        var configDirectory: String { root + "/etc" }
        var secretDropIn: String { configDirectory + "/Environments.plist.d/50-secret.plist" }
        private var made: [String] = []

        init() throws {
            try FileManager.default.createDirectory(
                atPath: configDirectory + "/Environments.plist.d", withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o755])
            #expect(chmod(root, 0o755) == 0)
            try EnvctlPeerTrustTests.plist(["Greeting": "hello"]).write(
                toFile: configDirectory + "/Environments.plist", atomically: true, encoding: .utf8)
            try EnvctlPeerTrustTests.plist(["DatabasePassword": EnvctlPeerTrustTests.secret]).write(
                toFile: secretDropIn, atomically: true, encoding: .utf8)
            #expect(chmod(secretDropIn, 0o600) == 0)
        }

        /// Makes `path` (removed afterwards unless it was there) owned by `owner` with `mode`.
        func directory(_ path: String, owner: UInt32, mode: mode_t) throws -> String {
            if !FileManager.default.fileExists(atPath: path) {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                made.append(path)
            }
            guard chown(path, owner, owner) == 0, chmod(path, mode) == 0 else { throw POSIXError(.EPERM) }
            return path
        }

        /// A new directory below `/run`, as `directory(_:owner:mode:)`.
        func belowRun(owner: UInt32, mode: mode_t) throws -> String {
            try directory("/run/envctl-trust-\(UUID().uuidString.prefix(8).lowercased())", owner: owner, mode: mode)
        }

        /// Every file below the configuration directory with its contents.
        func configuration() -> [String: Data] {
            var files: [String: Data] = [:]
            for name in FileManager.default.subpaths(atPath: configDirectory) ?? [] {
                files[name] = FileManager.default.contents(atPath: configDirectory + "/" + name)
            }
            return files
        }

        deinit {
            for path in made.reversed() {
                try? FileManager.default.removeItem(atPath: path + "/" + ControlInterface.socketFileName)
                try? FileManager.default.removeItem(atPath: path)
            }
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    /// A property list with `common` in Common and an empty Production.
    static func plist(_ common: [String: String]) -> String {
        plistDocument(
            "<key>Common</key><dict>"
                + common.map { "<key>\($0.key)</key><string>\($0.value)</string>" }.joined()
                + "</dict><key>Production</key><dict/>")
    }

    /// Runs envctl as from an operator's shell, with `extra` in its environment.
    static func envctl(_ arguments: [String], environment extra: [String: String] = [:]) throws -> FinishedProcess {
        try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment(extra), separately: true)
    }

    /// How envctl is told which daemon to ask.
    enum Finder: String, CaseIterable, Sendable {
        case socket = "--socket"
        case pid = "--pid"
        case applicationName = "--app-name"
        case runtimeDirectory = "$RUNTIME_DIRECTORY"

        /// The arguments and environment that name the daemon on `socket`, run by `pid`.
        func naming(socket: String, pid: Int32) -> (arguments: [String], environment: [String: String]) {
            let directory = (socket as NSString).deletingLastPathComponent
            switch self {
            case .socket: return (["--socket", socket], [:])
            case .pid: return (["--pid", String(pid)], [:])
            case .applicationName: return (["--app-name", (directory as NSString).lastPathComponent], [:])
            case .runtimeDirectory: return ([], ["RUNTIME_DIRECTORY": directory])
            }
        }
    }

    /// Who listens, and where.
    enum Listener: String, CaseIterable, Sendable {
        /// `nobody`, in a directory of its own in the temporary directory.
        case otherUserInItsDirectory = "another user, in a directory of its own"
        /// Root, in a directory below `/run` that every user may write (0777, no sticky bit).
        case rootInAnOpenDirectory = "root, in a directory every user may write"
        /// `nobody`, in a sticky directory below `/run` that every user may write (1777).
        case otherUserInAStickyDirectory = "another user, in a sticky directory every user may write"
        /// `nobody`, in its login's runtime directory `/run/user/65534`, which logind (root) makes.
        case otherUserInItsLoginRuntimeDirectory = "another user, in its login's runtime directory"

        /// Makes its directory in `place`; the directory, and the user it runs as (`nil`: root).
        func directory(in place: Place) throws -> (String, UInt32?) {
            switch self {
            case .otherUserInItsDirectory:
                return (try place.directory(place.root + "/nobody", owner: nobody, mode: 0o755), nobody)
            case .rootInAnOpenDirectory:
                return (try place.belowRun(owner: 0, mode: 0o777), nil)
            case .otherUserInAStickyDirectory:
                return (try place.belowRun(owner: 0, mode: 0o1777), nobody)
            case .otherUserInItsLoginRuntimeDirectory:
                return (try place.directory("/run/user/\(nobody)", owner: nobody, mode: 0o700), nobody)
            }
        }

        /// What envctl's refusal says.
        var reason: String {
            self == .rootInAnOpenDirectory ? "is writable by every user (mode 0777)" : "it runs as uid \(nobody)"
        }

        /// Whether `--app-name` can find it: its directory is `/run/<name>`.
        var isBelowRun: Bool { self == .rootInAnOpenDirectory || self == .otherUserInAStickyDirectory }
    }

    struct Impersonation: Sendable, CustomTestStringConvertible {
        var listener: Listener
        var finder: Finder
        var testDescription: String { "\(listener.rawValue), found by \(finder.rawValue)" }
    }

    static let impersonations: [Impersonation] = Listener.allCases.flatMap { listener in
        Finder.allCases.filter { $0 != .applicationName || listener.isBelowRun }.map {
            Impersonation(listener: listener, finder: $0)
        }
    }

    @Test("a listener envctl does not trust is sent nothing, and nothing is written", arguments: impersonations)
    func anImpostorIsSentNothing(_ case: Impersonation) throws {
        let place = try Place()
        let (directory, user) = try `case`.listener.directory(in: place)
        let socket = directory + "/" + ControlInterface.socketFileName
        let before = place.configuration()
        let impostor = try Impostor(socket: socket, reporting: place.configDirectory, user: user, in: place)
        let (naming, environment) = `case`.finder.naming(socket: socket, pid: impostor.pid)
        var outputs: [String] = []
        // The drop-in that holds the secret: its whole text would be the candidate of the check.
        for command in [["set", "LogLevel", "debug", "--drop-in", "50-secret"], ["reload"]] {
            let refused = try Self.envctl(command + naming, environment: environment)
            outputs.append(refused.output)
            #expect(refused.status == 1, "\(command): \(refused)")
            #expect(refused.standardError.contains("refusing the daemon on \(socket)"), "\(command): \(refused)")
            #expect(refused.standardError.contains(`case`.listener.reason), "\(command): \(refused)")
            #expect(refused.standardError.contains("nothing was sent to it"), "\(command): \(refused)")
        }
        let received = impostor.stop()
        #expect(received == [], "\(outputs)")
        #expect(!received.joined().contains(Self.secret))
        #expect(place.configuration() == before)
    }

    @Test(
        "a daemon of another user is trusted in the runtime directory root made for it below /run, not elsewhere"
    )
    func aRuntimeDirectoryRootMadeForTheDaemon() throws {
        // As systemd runs a unit with DynamicUser= and RuntimeDirectory=: the daemon's user owns
        // /run/NAME, and root the configuration directory.
        let unit = try DaemonHarness(plist: examplePlist(), runtimeDirectoryBelowRun: true)
        try unit.start(user: Self.nobody)
        _ = try #require(unit.waitForDatagram { $0.contains("READY=1") }, "\(unit.log)")
        let set = try unit.envctl(["set", "LogLevel", "debug", "--pid", String(unit.pid)])
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("checked by the running daemon (environment Staging)"), "\(set.output)")
        let dropIn = unit.configDirectory.path + "/Environments.plist.d/90-local.plist"
        #expect(FileManager.default.fileExists(atPath: dropIn))
        let reload = try unit.envctl(["reload"])
        #expect(reload.status == 0, "\(reload.output)")

        // The same daemon with its runtime directory in the temporary directory: any user can
        // make such a directory its own.
        let byHand = try DaemonHarness(plist: examplePlist())
        try byHand.start(user: Self.nobody)
        _ = try #require(byHand.waitForDatagram { $0.contains("READY=1") }, "\(byHand.log)")
        let socket = byHand.runtimeDirectory.path + "/" + ControlInterface.socketFileName
        for naming in [["--pid", String(byHand.pid)], ["--socket", socket], []] {
            let refused = try byHand.envctl(["set", "LogLevel", "debug"] + naming)
            #expect(refused.status == 1, "\(naming): \(refused.output)")
            #expect(
                refused.output.contains("refusing the daemon on \(socket): it runs as uid 65534"), "\(refused.output)")
            #expect(refused.output.contains("run envctl as root or as its user (uid 65534)"), "\(refused.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: byHand.configDirectory.path + "/Environments.plist.d"))
        // As its user, envctl trusts it.
        let asItsUser = try runToEnd(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.envctl, "get", "APIHost", "--socket",
                socket,
            ], environment: operatorEnvironment())
        #expect(asItsUser.status == 0 && asItsUser.output == "staging.example.com\n", "\(asItsUser.output)")
    }

    @Test("root's daemon in its own directories is trusted, however envctl finds it")
    func rootsDaemonIsTrusted() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") }, "\(daemon.log)")
        let socket = daemon.runtimeDirectory.path + "/" + ControlInterface.socketFileName
        for (level, naming) in zip(
            ["debug", "notice", "warning"], [["--pid", String(daemon.pid)], ["--socket", socket], []])
        {
            let set = try daemon.envctl(["set", "LogLevel", level] + naming)
            #expect(set.status == 0, "\(naming): \(set.output)")
            #expect(set.output.contains("checked by the running daemon"), "\(naming): \(set.output)")
        }
    }

    /// What a trusted peer may report as its configuration directory, and whether envctl uses it.
    enum ReportedDirectory: String, CaseIterable, Sendable {
        case otherUsers = "another user's directory"
        case open = "a directory every user may write"
        case otherUsersDropIns = "a directory whose drop-in directory is another user's"

        /// Makes it in `place`.
        func make(in place: Place) throws -> String {
            let path = place.root + "/claimed"
            try FileManager.default.createDirectory(
                atPath: path + "/Environments.plist.d", withIntermediateDirectories: true)
            try EnvctlPeerTrustTests.plist(["Greeting": "claimed"]).write(
                toFile: path + "/Environments.plist", atomically: true, encoding: .utf8)
            switch self {
            case .otherUsers: _ = try place.directory(path, owner: nobody, mode: 0o755)
            case .open: _ = try place.directory(path, owner: 0, mode: 0o777)
            case .otherUsersDropIns: _ = try place.directory(path + "/Environments.plist.d", owner: nobody, mode: 0o755)
            }
            return path
        }

        var reason: String {
            switch self {
            case .otherUsers: return "claimed is owned by uid 65534, not by root"
            case .open: return "claimed is writable by every user (mode 0777)"
            case .otherUsersDropIns: return "claimed/Environments.plist.d is owned by uid 65534, not by root"
            }
        }
    }

    @Test(
        "the configuration directory a daemon reports is used only when envctl trusts it, or --config-dir names it",
        arguments: ReportedDirectory.allCases)
    func aReportedDirectoryNeedsEnvctlsTrust(_ reported: ReportedDirectory) throws {
        let place = try Place()
        let claimed = try reported.make(in: place)
        // A peer envctl trusts (root, in a directory of root's): only its word about the directory is in question.
        let run = try place.directory(place.root + "/run", owner: 0, mode: 0o755)
        let socket = run + "/" + ControlInterface.socketFileName
        let impostor = try Impostor(socket: socket, reporting: claimed, user: nil, in: place)
        for command in [["set", "LogLevel", "debug"], ["diff", "--running"]] {
            let refused = try Self.envctl(command + ["--socket", socket])
            #expect(refused.status == (command[0] == "diff" ? 2 : 1), "\(command): \(refused)")
            #expect(
                refused.standardError.contains(
                    "refusing \(claimed), the configuration directory that the daemon on \(socket) reports"),
                "\(command): \(refused)")
            #expect(refused.standardError.contains(reported.reason), "\(command): \(refused)")
            #expect(refused.standardError.contains("pass --config-dir \(claimed)"), "\(command): \(refused)")
        }
        #expect(!FileManager.default.fileExists(atPath: claimed + "/Environments.plist.d/90-local.plist"))
        // The operator names the directory: envctl then asks the daemon's check, and writes.
        let named = try Self.envctl(["set", "LogLevel", "debug", "--socket", socket, "--config-dir", claimed])
        #expect(named.status == 0, "\(named)")
        #expect(FileManager.default.fileExists(atPath: claimed + "/Environments.plist.d/90-local.plist"))
        let received = impostor.stop()
        let checks = received.filter { $0.contains(ControlInterface.Method.check.qualifiedName) }
        #expect(checks.count == 1, "\(received)")
        // Besides Describe, the declaration set checks the key against (Schema: this one has none).
        #expect(
            received.filter {
                !$0.contains(ControlInterface.Method.describe.qualifiedName)
                    && !$0.contains(ControlInterface.Method.schema.qualifiedName)
            } == checks)
    }
}
