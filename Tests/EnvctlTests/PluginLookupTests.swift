import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// envctl's lookup of `envctl-fleet` is as careful as its lookup of a socket (issue 53 item 4):
/// it passes over what is not a regular executable file, refuses as root a program that others
/// could have put there or changed, and the program inherits no descriptor envctl opened.
/// Against a copy of the built envctl alone in a directory, and a stand-in `envctl-fleet` (a
/// shell script), as EnvctlFleetToolTests run them.
@Suite(.serialized, .blocking) struct PluginLookupTests {
    struct Stage {
        let root: String
        var envctl: String { root + "/alone/envctl" }
        var host: String { root + "/host" }
        var record: String { root + "/record" }

        init() throws {
            root = "/tmp/envctl-plugin-\(UUID().uuidString.prefix(8))"
            for directory in ["alone", "host"] {
                try FileManager.default.createDirectory(
                    atPath: root + "/" + directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o755])
            }
            chmod(root, 0o755)
            if link(BuiltProducts.envctl, envctl) != 0 {
                try FileManager.default.copyItem(atPath: BuiltProducts.envctl, toPath: envctl)
            }
            try plistDocument("<key>Production</key><dict/>").write(
                toFile: host + "/Environments.plist", atomically: true, encoding: .utf8)
        }

        /// A stand-in in `directory` (made 0755 unless it exists) that records its descriptors
        /// (`ls -l /proc/$$/fd`) and prints an empty list of documents.
        func installTool(in directory: String) throws {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                # The shell's own descriptors ($$ is the shell's, even in the subshell that writes).
                ( /bin/ls -l /proc/$$/fd ) > '\(record)'
                printf '<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><array/></plist>'

                """
            let path = directory + "/envctl-fleet"
            try writeExecutableScript(script, to: path)
        }

        /// Runs envctl with `path` as `PATH`, in `directory`, with no descriptor but 0, 1 and 2
        /// (a launcher closes the rest, so what the stand-in has beyond them is envctl's).
        func envctl(_ arguments: [String], path: String, in directory: String? = nil) throws -> FinishedProcess {
            var environment = operatorEnvironment()
            environment["PATH"] = path
            let launcher =
                "import os, sys; os.chdir(sys.argv[1]); os.closerange(3, 65536); os.execve(sys.argv[2], sys.argv[2:], os.environ)"
            return try runToEnd(
                "/usr/bin/python3", ["-c", launcher, directory ?? root, envctl] + arguments, environment: environment)
        }

        /// What the stand-in recorded: `nil` when it did not run.
        func recorded() -> String? { try? String(contentsOfFile: record, encoding: .utf8) }

        var show: [String] {
            ["show", "--config-dir", host, "--environment", "Production", "--etcd-endpoints", "http://127.0.0.1:1"]
        }
    }

    @Test("a directory named envctl-fleet earlier on PATH does not stop the search")
    func directoryOnPath() throws {
        let stage = try Stage()
        defer { try? FileManager.default.removeItem(atPath: stage.root) }
        try FileManager.default.createDirectory(
            atPath: stage.root + "/first/envctl-fleet", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(
            atPath: stage.root + "/second", withIntermediateDirectories: true)
        try stage.installTool(in: stage.root + "/second")
        let shown = try stage.envctl(stage.show, path: stage.root + "/first:" + stage.root + "/second")
        #expect(shown.status == 0, "\(shown.output)")
        #expect(stage.recorded() != nil, "the stand-in did not run: \(shown.output)")
    }

    @Test(
        "as root, an envctl-fleet in a directory others can write, or found through '.' or an empty PATH entry, is refused, naming it"
    )
    func unsafePlugins() throws {
        try #require(geteuid() == 0, "needs root")
        let stage = try Stage()
        defer { try? FileManager.default.removeItem(atPath: stage.root) }
        let open = stage.root + "/open"
        try stage.installTool(in: open)
        chmod(open, 0o777)
        let refused = try stage.envctl(stage.show, path: open)
        #expect(refused.status != 0, "\(refused.output)")
        #expect(refused.output.contains("refusing to run \(open)/envctl-fleet as root"), "\(refused.output)")
        #expect(refused.output.contains("writable by every user"), "\(refused.output)")
        #expect(stage.recorded() == nil)
        // The same through envctl fleet, which runs it in envctl's place.
        let fleet = try stage.envctl(["fleet", "status"], path: open)
        #expect(fleet.status != 0, "\(fleet.output)")
        #expect(fleet.output.contains("refusing to run \(open)/envctl-fleet as root"), "\(fleet.output)")
        #expect(stage.recorded() == nil)

        // Group-writable by a group other than root's, and owned by another user.
        chmod(open, 0o775)
        chown(open, 0, 100)
        let group = try stage.envctl(stage.show, path: open)
        #expect(group.output.contains("writable by group 100"), "\(group.output)")
        chmod(open, 0o755)
        chown(open, 0, 0)
        chown(open + "/envctl-fleet", 65534, 65534)
        let owned = try stage.envctl(stage.show, path: open)
        #expect(owned.output.contains("belongs to uid 65534"), "\(owned.output)")
        #expect(stage.recorded() == nil)

        // The working directory, as '.' or as an empty entry.
        chown(open + "/envctl-fleet", 0, 0)
        for path in [".", "", ":/usr/bin", "/nonexistent::/usr/bin"] {
            let here = try stage.envctl(stage.show, path: path, in: open)
            #expect(here.status != 0, "PATH=\(path): \(here.output)")
            #expect(here.output.contains("refusing to run"), "PATH=\(path): \(here.output)")
            #expect(here.output.contains("envctl-fleet as root"), "PATH=\(path): \(here.output)")
        }
        #expect(stage.recorded() == nil)

        // The same program in a directory only root can write is run.
        let safe = try stage.envctl(stage.show, path: open)
        #expect(safe.status == 0, "\(safe.output)")
        #expect(stage.recorded() != nil)
    }

    @Test("envctl-fleet inherits no descriptor envctl opened: run for the fleet's documents, and in envctl's place")
    func noDescriptorInherited() throws {
        let stage = try Stage()
        defer { try? FileManager.default.removeItem(atPath: stage.root) }
        let tools = stage.root + "/tools"
        try stage.installTool(in: tools)
        for arguments in [stage.show, ["fleet", "status"]] {
            unlink(stage.record)
            let ran = try stage.envctl(arguments, path: tools)
            #expect(arguments[0] == "fleet" || ran.status == 0, "\(ran.output)")
            let record = try #require(stage.recorded(), "\(arguments): the stand-in did not run: \(ran.output)")
            // `N -> TARGET`, for each descriptor but 0, 1 and 2, and the shell's own script.
            let extra = record.split(separator: "\n").compactMap { line -> String? in
                guard let arrow = line.range(of: " -> ") else { return nil }
                let number = line[..<arrow.lowerBound].split(separator: " ").last.map(String.init) ?? ""
                let target = String(line[arrow.upperBound...])
                if ["0", "1", "2"].contains(number) || target == tools + "/envctl-fleet" || target.hasPrefix("/proc/") {
                    return nil
                }
                return "\(number) -> \(target)"
            }
            #expect(extra.isEmpty, "\(arguments[0]): envctl-fleet inherited \(extra)")
        }
    }
    @Test("the systemd-creds that credential set runs inherits no descriptor envctl opened")
    func credentialToolInheritsNothing() throws {
        let stage = try Stage()
        defer { try? FileManager.default.removeItem(atPath: stage.root) }
        let tools = stage.root + "/tools"
        try FileManager.default.createDirectory(atPath: tools, withIntermediateDirectories: true)
        // A stand-in that records its descriptors and encrypts nothing.
        let script = """
            #!/bin/sh
            ( /bin/ls -l /proc/$$/fd ) > '\(stage.record)'
            /bin/cat > /dev/null
            printf 'encrypted'

            """
        try writeExecutableScript(script, to: tools + "/systemd-creds")
        try "secret".write(toFile: stage.root + "/secret", atomically: true, encoding: .utf8)
        let arguments = [
            "credential", "set", "db-password", "--from-file", stage.root + "/secret", "--with-key", "host",
            "--no-reload", "--config-dir", stage.host, "--unit", "example-daemon", "--unit-dir", stage.root + "/units",
            "--credstore", stage.root + "/credstore",
        ]
        let ran = try stage.envctl(arguments, path: tools + ":/usr/bin:/bin")
        let record = try #require(stage.recorded(), "systemd-creds did not run: \(ran.output)")
        let extra = record.split(separator: "\n").compactMap { line -> String? in
            guard let arrow = line.range(of: " -> ") else { return nil }
            let number = line[..<arrow.lowerBound].split(separator: " ").last.map(String.init) ?? ""
            let target = String(line[arrow.upperBound...])
            if ["0", "1", "2"].contains(number) || target == tools + "/systemd-creds" || target.hasPrefix("/proc/") {
                return nil
            }
            return "\(number) -> \(target)"
        }
        #expect(extra.isEmpty, "systemd-creds inherited \(extra)")

        // As root, one in a directory others can write is refused: the secret is not given to it.
        if geteuid() == 0 {
            unlink(stage.record)
            chmod(tools, 0o777)
            let refused = try stage.envctl(arguments, path: tools + ":/usr/bin:/bin")
            #expect(refused.status != 0, "\(refused.output)")
            #expect(refused.output.contains("refusing to run \(tools)/systemd-creds as root"), "\(refused.output)")
            #expect(stage.recorded() == nil)
        }
    }
}
