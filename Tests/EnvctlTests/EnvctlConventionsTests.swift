import Environments
import EnvironmentsControl
import Foundation
import TestSupport
import Testing

/// envctl behaves as command-line tools do: `--version`, `diff`'s exit status as diff(1)'s, a
/// secret that prints nothing rather than a placeholder, and errors that name how an environment
/// was chosen. Against the built envctl and example daemon, on files in a temporary directory.
@Suite("envctl conventions", .blocking)
struct EnvctlConventionsTests {
    /// A configuration directory with two environments that differ in one key, and a secret.
    private static func configuration() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("envctl-conventions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try plistDocument(
            """
                <key>Common</key>
                <dict>
                    <key>APIHost</key><string>api.example.com</string>
                    <key>Token</key><string>not-for-your-eyes</string>
                </dict>
                <key>Secrets</key><array><string>Token</string></array>
                <key>Staging</key><dict><key>APIHost</key><string>staging.example.com</string></dict>
                <key>Production</key><dict/>
                <key>Canary</key><dict/>
            """
        ).write(to: directory.appendingPathComponent("Environments.plist"), atomically: true, encoding: .utf8)
        return directory
    }

    /// Runs a built executable; its standard output and standard error apart.
    private static func run(_ executable: String, _ arguments: [String]) throws -> FinishedProcess {
        try runToEnd(executable, arguments, environment: operatorEnvironment(), separately: true)
    }

    /// A process that listens on a Unix socket at `path` (Python's, a real listening socket),
    /// with an environment that names no runtime directory.
    /// With `others` more listening sockets beside it (in the same directory), which put
    /// `/proc/net/unix` past the kernel's first page, as on any host.
    private static func listener(at path: String, others: Int = 0) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c",
            "import os, socket, sys, time\nkept = []\n"
                + "for n in range(int(sys.argv[2])):\n"
                + "    o = socket.socket(socket.AF_UNIX); o.bind(sys.argv[1] + f'.other-{n}'); o.listen(); kept.append(o)\n"
                + "s = socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1])\ns.listen()\n"
                + "print('ready', flush=True)\ntime.sleep(60)",
            path, String(others),
        ]
        process.environment = ["PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Until "ready" (it listens) or the end of its output (it failed: the test then says so).
        var said = Data()
        while !String(decoding: said, as: UTF8.self).contains("ready") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            said += chunk
        }
        return (process, output)
    }

    /// `ControlSocketPath.forProcess` for `pid`, asked until it names `expected` or 10 s pass (a
    /// loaded machine may show the new socket in `/proc` a moment late).
    private static func socketPath(of pid: Int32, expecting expected: String) -> String? {
        let deadline = ContinuousClock.now + .seconds(10)
        var found = ControlSocketPath.forProcess(pid, processEnvironment: [:])
        while found != expected && ContinuousClock.now < deadline {
            usleep(50_000)
            found = ControlSocketPath.forProcess(pid, processEnvironment: [:])
        }
        return found
    }

    @Test(
        "--pid finds the control socket a daemon started by hand listens on, among a thousand others, whatever its name"
    )
    func pidFindsTheSocketTheProcessListensOn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pid-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let control = directory.appendingPathComponent(ControlInterface.socketFileName).path
        let (daemon, _) = try Self.listener(at: control, others: 1_000)
        defer { daemon.terminate() }
        #expect(
            Self.socketPath(of: daemon.processIdentifier, expecting: control) == control,
            "python3 running: \(daemon.isRunning)")
        // A socket of another name is not taken for a control socket.
        let other = directory.appendingPathComponent("other.sock").path
        let (stranger, _) = try Self.listener(at: other)
        defer { stranger.terminate() }
        #expect(ControlSocketPath.forProcess(stranger.processIdentifier, processEnvironment: [:]) != other)
    }

    @Test("reload refuses the options that choose files, before it asks anything, and says what to use")
    func reloadRefusesFileOptions() throws {
        for options in [["--config-dir", "/tmp"], ["--environment", "Staging", "--pid", "1"]] {
            let refused = try Self.run(BuiltProducts.envctl, ["reload"] + options)
            #expect(refused.status == 64, "\(options): \(refused.standardError)")
            #expect(refused.standardError.contains("do not apply"), "\(refused.standardError)")
            #expect(refused.standardError.contains("envctl check \(options[0])"), "\(refused.standardError)")
        }
    }

    @Test("--version prints the package's version, for envctl and the example daemon")
    func version() throws {
        for executable in [BuiltProducts.envctl, BuiltProducts.exampleDaemon] {
            let result = try Self.run(executable, ["--version"])
            #expect(result.status == 0)
            #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == LibraryVersion.current)
        }
    }

    @Test("diff exits 0 without differences, 1 with differences, 2 on an error")
    func diffExitStatus() throws {
        let directory = try Self.configuration()
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = ["diff", "--config-dir", directory.path]

        let same = try Self.run(BuiltProducts.envctl, base + ["Production", "Canary"])
        #expect(same.status == 0, "\(same)")
        #expect(same.standardOutput.contains("# no differences"))

        let different = try Self.run(BuiltProducts.envctl, base + ["Staging", "Production"])
        #expect(different.status == 1, "\(different)")
        #expect(different.standardOutput.contains("- APIHost = staging.example.com"))
        #expect(different.standardOutput.contains("+ APIHost = api.example.com"))
        #expect(different.standardError.isEmpty, "\(different.standardError)")

        let unknown = try Self.run(BuiltProducts.envctl, base + ["Staging", "Nowhere"])
        #expect(unknown.status == 2, "\(unknown)")
        // The environment came from an argument, not a flag: the message says so.
        #expect(unknown.standardError.contains("unknown environment 'Nowhere' (given as an argument to envctl diff)"))
        #expect(!unknown.standardError.contains("--environment"), "\(unknown.standardError)")
    }

    @Test("an unknown environment from --environment is said to come from --environment")
    func unknownEnvironmentFromFlag() throws {
        let directory = try Self.configuration()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try Self.run(
            BuiltProducts.envctl, ["show", "--config-dir", directory.path, "--environment", "Nowhere"])
        #expect(result.status == 1)
        #expect(result.standardError.contains("unknown environment 'Nowhere' (selected with --environment)"))
    }

    @Test("get of a secret without --show-secrets prints nothing on stdout, says why on stderr, exits 1")
    func getSecret() throws {
        let directory = try Self.configuration()
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = ["get", "--config-dir", directory.path, "--environment", "Production", "Token"]

        let redacted = try Self.run(BuiltProducts.envctl, base)
        #expect(redacted.status == 1)
        #expect(redacted.standardOutput.isEmpty, "\(redacted.standardOutput)")
        #expect(redacted.standardError.contains("'Token' is secret"))
        #expect(redacted.standardError.contains("--show-secrets"))
        #expect(!redacted.standardError.contains("not-for-your-eyes"))

        let shown = try Self.run(BuiltProducts.envctl, base + ["--show-secrets"])
        #expect(shown.status == 0)
        #expect(shown.standardOutput == "not-for-your-eyes\n")

        let plain = try Self.run(
            BuiltProducts.envctl, ["get", "--config-dir", directory.path, "--environment", "Staging", "APIHost"])
        #expect(plain.status == 0)
        #expect(plain.standardOutput == "staging.example.com\n")
    }
}
