import Foundation
import TestSupport
import Testing

/// envctl's fleet commands are envctl-fleet's (built with the package trait Fleet): `publish`
/// and `fleet` run it in envctl's place, readers given etcd options run `envctl-fleet
/// documents`, and without it envctl names the package that provides it. Against the built
/// envctl (a copy, alone in a directory: the build's own envctl has the real envctl-fleet beside
/// it when the trait Fleet is on) and a stand-in envctl-fleet (a shell script on `PATH` that
/// records its arguments and answers from a file); the fleet's PublishTests run the real one
/// against etcd.
@Suite("envctl and envctl-fleet", .blocking)
struct EnvctlFleetToolTests {
    /// A directory for the stand-in and its records, and a host's configuration directory.
    private struct Stage {
        let tools: URL
        let host: URL
        /// A copy of the built envctl, in a directory of its own.
        let envctl: URL

        init() throws {
            let root = FileManager.default.temporaryDirectory
                .appendingPathComponent("envctl-fleet-tool-\(UUID().uuidString)")
            tools = root.appendingPathComponent("bin")
            host = root.appendingPathComponent("host")
            envctl = root.appendingPathComponent("envctl-alone").appendingPathComponent("envctl")
            for directory in [tools, host, envctl.deletingLastPathComponent()] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            // A hard link where the file system allows one (no copy of a debug build's envctl).
            let built = URL(fileURLWithPath: BuiltProducts.envctl)
            do {
                try FileManager.default.linkItem(at: built, to: envctl)
            } catch {
                try FileManager.default.copyItem(at: built, to: envctl)
            }
            try plistDocument(
                """
                    <key>Common</key>
                    <dict><key>Shared</key><string>host</string></dict>
                    <key>Production</key><dict/>
                """
            ).write(to: host.appendingPathComponent("Environments.plist"), atomically: true, encoding: .utf8)
        }

        /// Installs a stand-in `envctl-fleet` that records its arguments, prints `answer`
        /// and exits with `status`.
        func installTool(answer: Data, status: Int32 = 0) throws {
            try answer.write(to: tools.appendingPathComponent("answer"))
            // Only builtins and absolute paths: `PATH` holds this directory alone.
            let script = """
                #!/bin/sh
                printf '%s\\n' "$@" > '\(tools.path)/arguments'
                /bin/cat '\(tools.path)/answer'
                exit \(status)

                """
            let path = tools.appendingPathComponent("envctl-fleet").path
            try writeExecutableScript(script, to: path)
        }

        /// The arguments the stand-in was last run with, one per line.
        func recordedArguments() throws -> [String] {
            try String(contentsOf: tools.appendingPathComponent("arguments"), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }

        /// Runs envctl with only the stand-in's directory on `PATH`.
        func envctl(_ arguments: [String], _ extra: [String: String] = [:]) throws -> FinishedProcess {
            var environment = operatorEnvironment(extra)
            environment["PATH"] = tools.path
            return try runToEnd(envctl.path, arguments, environment: environment, separately: true)
        }
    }

    /// The fleet's documents as `envctl-fleet documents` prints them: one main document that
    /// sets `FromFleet` and `Shared`.
    private static func fleetDocuments() throws -> Data {
        let document = Data(
            plistDocument(
                """
                    <key>Common</key>
                    <dict>
                        <key>FromFleet</key><string>fleet</string>
                        <key>Shared</key><string>fleet</string>
                    </dict>
                """
            ).utf8)
        let list: [[String: Any]] = [["origin": "etcd:/fleet/app/Environments.plist@7", "data": document]]
        return try PropertyListSerialization.data(fromPropertyList: list, format: .binary, options: 0)
    }

    @Test(
        "without envctl-fleet, a fleet command fails and names the package that provides it",
        arguments: [
            ["publish", "Environments.plist", "--etcd-endpoints", "http://127.0.0.1:9"],
            ["fleet", "status"],
            ["get", "Shared", "--environment", "Production", "--etcd-endpoints", "http://127.0.0.1:9"],
        ])
    func missingTool(arguments: [String]) throws {
        let stage = try Stage()
        let finished = try stage.envctl(arguments + (arguments[0] == "get" ? ["--config-dir", stage.host.path] : []))
        #expect(finished.status == 1)
        #expect(finished.standardError.contains("needs envctl-fleet, which is not installed"))
        #expect(finished.standardError.contains("Debian package environments-fleet"))
        #expect(finished.standardError.contains("--traits Fleet --product envctl-fleet"))
    }

    @Test("publish and fleet run envctl-fleet in envctl's place, with every argument and its exit status")
    func publishAndFleetRunTheTool() throws {
        let stage = try Stage()
        try stage.installTool(answer: Data("published\n".utf8), status: 7)
        let published = try stage.envctl(["publish", "--etcd-endpoints=http://127.0.0.1:9", "a.plist", "--stage", "5%"])
        #expect(published.status == 7)
        #expect(published.standardOutput == "published\n")
        #expect(
            try stage.recordedArguments() == [
                "publish", "--etcd-endpoints=http://127.0.0.1:9", "a.plist", "--stage", "5%",
            ])

        let status = try stage.envctl(["fleet", "status", "--json", "--etcd-prefix", "/fleet/app/"])
        #expect(status.status == 7)
        #expect(try stage.recordedArguments() == ["status", "--json", "--etcd-prefix", "/fleet/app/"])
    }

    @Test("a reader given etcd options puts the fleet's documents below the host's files")
    func readersTakeTheFleetsDocuments() throws {
        let stage = try Stage()
        try stage.installTool(answer: Self.fleetDocuments())
        let common = ["--config-dir", stage.host.path, "--environment", "Production"]
        let etcd = ["--etcd-endpoints", "http://127.0.0.1:9", "--etcd-prefix=/fleet/app/"]

        let fromFleet = try stage.envctl(["get", "FromFleet"] + common + etcd)
        #expect(fromFleet.status == 0, "\(fromFleet.standardError)")
        #expect(fromFleet.standardOutput == "fleet\n")
        #expect(try stage.recordedArguments() == ["documents"] + etcd)
        // The host's file overrides the fleet's document.
        let shared = try stage.envctl(["get", "Shared"] + etcd + common)
        #expect(shared.standardOutput == "host\n")
        // The variable alone asks for the fleet too; envctl-fleet reads it from its environment.
        let byVariable = try stage.envctl(
            ["show"] + common, ["ENVIRONMENTS_ETCD_ENDPOINTS": "http://127.0.0.1:9"])
        #expect(byVariable.status == 0, "\(byVariable.standardError)")
        #expect(byVariable.standardOutput.contains("etcd:/fleet/app/Environments.plist@7"))
        #expect(try stage.recordedArguments() == ["documents"])
        // Without either, the files alone: the stand-in is not run.
        try FileManager.default.removeItem(at: stage.tools.appendingPathComponent("arguments"))
        let filesAlone = try stage.envctl(["get", "FromFleet"] + common)
        #expect(filesAlone.status != 0)
        #expect(!FileManager.default.fileExists(atPath: stage.tools.appendingPathComponent("arguments").path))
    }

    @Test("a failing or foreign envctl-fleet is an error that says so, not an empty fleet")
    func brokenToolIsAnError() throws {
        let stage = try Stage()
        let arguments = ["get", "Shared", "--config-dir", stage.host.path, "--etcd-endpoints", "http://127.0.0.1:9"]
        try stage.installTool(answer: Data(), status: 3)
        let failed = try stage.envctl(arguments)
        #expect(failed.status == 1)
        #expect(failed.standardError.contains("envctl-fleet documents exited with status 3"))

        try stage.installTool(answer: Data("not a property list".utf8))
        let foreign = try stage.envctl(arguments)
        #expect(foreign.status == 1)
        #expect(foreign.standardError.contains("wrote no property list"))
    }
}
