import EnvironmentsDaemon
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Broken deploys and the validation gate, through the real example daemon and envctl: a
/// reload that meets a dangling or looping link, a file where a directory belongs (or the
/// reverse), a missing named directory, text after `</plist>` or a file it may not read is
/// rejected (`envctl reload` exits 1 with the cause) and the daemon goes on serving its last
/// good configuration; at start, the same is a start failure. `envctl check` checks every
/// environment the files define.
@Suite(.serialized, .blocking) struct BrokenDeployDaemonTests {
    private static func link(_ target: String, at path: String) throws {
        guard symlink(target, path) == 0 else { throw POSIXError(.EIO) }
    }

    /// `envctl reload` against the daemon: rejected, with `cause` and `path` in the message,
    /// and the daemon still serves the last good value.
    private static func expectRejected(
        _ daemon: DaemonHarness, cause: String, path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reload = try daemon.envctl(["reload", "--pid", String(daemon.pid), "--timeout", "20"])
        #expect(reload.status == 1, "\(reload.output)", sourceLocation: sourceLocation)
        #expect(
            reload.output.contains("reload rejected by the daemon"), "\(reload.output)", sourceLocation: sourceLocation)
        #expect(reload.output.contains(cause), "\(reload.output)", sourceLocation: sourceLocation)
        #expect(reload.output.contains(path), "\(reload.output)", sourceLocation: sourceLocation)
        let get = try daemon.envctl(["get", "APIBaseUrl", "--pid", String(daemon.pid)])
        #expect(get.output == "https://good.example.com/v1\n", "\(get.output)", sourceLocation: sourceLocation)
        #expect(try ReloadState.read(from: daemon.stateFile).generation == 1, sourceLocation: sourceLocation)
    }

    @Test("a reload that meets a broken deploy is rejected and the last good configuration stays")
    func brokenDeploysAreRejectedReloads() throws {
        let daemon = try DaemonHarness(plist: examplePlist(apiHost: "good.example.com"))
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let directory = daemon.configDirectory.path
        let main = daemon.mainFile.path
        // Links are made beside the file and renamed over it, so that it is never missing (which
        // would be a deliberate removal: the built-in configuration).
        func replaceMain(withLinkTo target: String) throws {
            let temporary = directory + "/.link"
            try Self.link(target, at: temporary)
            #expect(rename(temporary, main) == 0)
        }

        // The main file: a dangling link, a loop of links.
        try replaceMain(withLinkTo: daemon.root.appendingPathComponent("releases/42/Environments.plist").path)
        try Self.expectRejected(daemon, cause: "which does not exist", path: main)
        try replaceMain(withLinkTo: main)
        try Self.expectRejected(daemon, cause: "too many levels of symbolic links", path: main)
        try daemon.replaceMainFile(with: examplePlist(apiHost: "good.example.com"))

        // The drop-in directory: a file, a dangling link; a drop-in that is a dangling link.
        let dropIns = directory + "/Environments.plist.d"
        try "oops".write(toFile: dropIns, atomically: false, encoding: .utf8)
        try Self.expectRejected(daemon, cause: "not a directory", path: dropIns)
        unlink(dropIns)
        try Self.link(daemon.root.appendingPathComponent("shared").path, at: dropIns)
        try Self.expectRejected(daemon, cause: "which does not exist", path: dropIns)
        unlink(dropIns)
        #expect(mkdir(dropIns, 0o755) == 0)
        try Self.link(dropIns + "/gone.plist", at: dropIns + "/50-local.plist")
        try Self.expectRejected(daemon, cause: "which does not exist", path: dropIns + "/50-local.plist")
        unlink(dropIns + "/50-local.plist")
        // A directory where a file belongs.
        #expect(mkdir(dropIns + "/60-dir.plist", 0o755) == 0)
        try Self.expectRejected(daemon, cause: "is a directory", path: dropIns + "/60-dir.plist")
        rmdir(dropIns + "/60-dir.plist")

        // The (named) configuration directory: gone, a dangling link, a file.
        let aside = daemon.root.appendingPathComponent("etc.aside").path
        #expect(rename(directory, aside) == 0)
        try Self.expectRejected(daemon, cause: "does not exist", path: directory)
        try Self.link(daemon.root.appendingPathComponent("etc.release-7").path, at: directory)
        try Self.expectRejected(daemon, cause: "which does not exist", path: directory)
        unlink(directory)
        try "oops".write(toFile: directory, atomically: false, encoding: .utf8)
        try Self.expectRejected(daemon, cause: "not a directory", path: directory)
        unlink(directory)
        #expect(rename(aside, directory) == 0)

        // Text after </plist>: a merge leftover.
        try daemon.replaceMainFile(with: examplePlist(apiHost: "good.example.com") + "\n<<<<<<< HEAD\n")
        try Self.expectRejected(daemon, cause: "text follows the end of the property list", path: main + ":")

        // Repaired: applied again.
        try daemon.replaceMainFile(with: examplePlist(apiHost: "repaired.example.com"))
        let repaired = try daemon.envctl(["reload", "--pid", String(daemon.pid), "--timeout", "20"])
        #expect(repaired.status == 0, "\(repaired.output)")
        #expect(daemon.process?.isRunning == true)
    }

    @Test("a main file the daemon's user may not read is a rejected reload", .enabled(if: getuid() == 0))
    func permissionDeniedIsARejectedReload() throws {
        // Its runtime directory below /run, as RuntimeDirectory= makes it for a unit's user:
        // envctl, as root, trusts a daemon of another user only there.
        let daemon = try DaemonHarness(plist: examplePlist(apiHost: "good.example.com"), runtimeDirectoryBelowRun: true)
        try daemon.start(user: 65534)
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        #expect(chmod(daemon.mainFile.path, 0o600) == 0)
        try Self.expectRejected(daemon, cause: "permission denied", path: daemon.mainFile.path)
    }

    @Test("envctl check as a user who may not read the files fails with the cause", .enabled(if: getuid() == 0))
    func checkWithoutPermission() throws {
        let directory = try ExampleConfigurationDirectory()
        func checkAsNobody() throws -> FinishedProcess {
            try runToEnd(
                "/usr/bin/setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.envctl, "check", "--config-dir",
                    directory.path,
                ])
        }
        #expect(chmod(directory.path, 0o755) == 0)
        let readable = try checkAsNobody()
        #expect(readable.status == 0, "\(readable.output)")

        #expect(chmod(directory.path + "/Environments.plist", 0o600) == 0)
        let unreadable = try checkAsNobody()
        #expect(unreadable.status == 1, "\(unreadable.output)")
        #expect(unreadable.output.contains("permission denied"), "\(unreadable.output)")
        #expect(unreadable.output.contains(directory.path + "/Environments.plist"), "\(unreadable.output)")

        // A drop-in directory it may not list, then a configuration directory it may not search.
        #expect(chmod(directory.path + "/Environments.plist", 0o644) == 0)
        #expect(chmod(directory.path + "/Environments.plist.d", 0o300) == 0)
        let unlisted = try checkAsNobody()
        #expect(unlisted.status == 1, "\(unlisted.output)")
        #expect(
            unlisted.output.contains("the drop-in directory cannot be read: permission denied"), "\(unlisted.output)")
        #expect(chmod(directory.path, 0o600) == 0)
        let unsearchable = try checkAsNobody()
        #expect(unsearchable.status == 1, "\(unsearchable.output)")
        #expect(unsearchable.output.contains("permission denied"), "\(unsearchable.output)")
        #expect(chmod(directory.path, 0o755) == 0)
    }

    @Test("a named configuration directory that does not exist is a start failure")
    func missingNamedDirectoryFailsTheStart() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try FileManager.default.removeItem(at: daemon.configDirectory)
        try daemon.start()
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("cannot start"), "\(daemon.log)")
        #expect(daemon.log.contains("the configuration directory (from --config-dir) does not exist"), "\(daemon.log)")
    }

    @Test("a dangling main file link is a start failure, not the built-in configuration")
    func danglingLinkFailsTheStart() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        unlink(daemon.mainFile.path)
        try Self.link(
            daemon.root.appendingPathComponent("releases/1/Environments.plist").path, at: daemon.mainFile.path)
        try daemon.start()
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("which does not exist"), "\(daemon.log)")
    }

    @Test("envctl check checks every environment the files define and exits 1 if any fails")
    func checkCoversEveryEnvironment() throws {
        let directory = try ExampleConfigurationDirectory()
        try plistDocument(
            """
                <key>Common</key><dict><key>APIHost</key><string>api.example.com</string></dict>
                <key>Debug</key><dict/>
                <key>Staging</key><dict/>
            """
        ).write(toFile: directory.path + "/Environments.plist", atomically: true, encoding: .utf8)
        // A drop-in adds Production, broken: a reference to a key nobody defines.
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict><key>Production</key><dict><key>APIBaseUrl</key><string>https://${APIHots}/v1</string></dict></dict>
        </plist>
        """.write(toFile: directory.path + "/Environments.plist.d/60-prod.plist", atomically: true, encoding: .utf8)

        let all = try runEnvctl(["check", "--config-dir", directory.path])
        #expect(all.status == 1, "\(all.output)")
        #expect(all.output.contains("OK: environment Debug,"), "\(all.output)")
        #expect(all.output.contains("OK: environment Staging,"), "\(all.output)")
        #expect(all.output.contains("FAILED: environment Production: "), "\(all.output)")
        #expect(all.output.contains("APIHots"), "\(all.output)")
        #expect(all.output.contains("1 of 3 environments failed the check: Production"), "\(all.output)")

        let one = try runEnvctl(["check", "--config-dir", directory.path, "--environment", "Staging"])
        #expect(one.status == 0, "\(one.output)")
        #expect(one.output.contains("OK: environment Staging,") && !one.output.contains("Production"), "\(one.output)")

        // A file that cannot be read stops the check before any environment.
        try "<plist><dict></dict></plist>\ntrailing".write(
            toFile: directory.path + "/Environments.plist.d/70-bad.plist", atomically: true, encoding: .utf8)
        let broken = try runEnvctl(["check", "--config-dir", directory.path])
        #expect(broken.status == 1, "\(broken.output)")
        #expect(broken.output.contains("70-bad.plist:2: "), "\(broken.output)")
    }

    @Test("envctl edit refuses text after </plist>; nothing is installed")
    func editRefusesTrailingText() throws {
        let directory = try ExampleConfigurationDirectory()
        let editor = try scriptedEditor(in: directory)
        defer { unlink(editor) }
        let contents = directory.path + "/../trailing-\(UUID().uuidString.prefix(8)).plist"
        defer { unlink(contents) }
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict><key>Common</key><dict><key>LogLevel</key><string>debug</string></dict></dict>
        </plist>
        <plist version="1.0">
        <dict><key>Common</key><dict><key>LogLevel</key><string>loud</string></dict></dict>
        </plist>
        """.write(toFile: contents, atomically: true, encoding: .utf8)
        let before = try directory.contents()
        let refused = try runEnvctl(
            ["edit", "--config-dir", directory.path], environment: ["EDITOR": editor, "NEW_CONTENTS": contents])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("90-local.plist:5: "), "\(refused.output)")
        // The rejected text is kept for the operator (no terminal): not for this test.
        if let kept = refused.output.components(separatedBy: "your rejected version is kept in ").dropFirst().first?
            .components(separatedBy: " ").first
        {
            try? FileManager.default.removeItem(atPath: (kept as NSString).deletingLastPathComponent)
        }
        #expect(refused.output.contains("a second property list follows the first"), "\(refused.output)")
        #expect(try directory.contents() == before)
    }

    @Test("envctl show --json prints infinite and NaN reals as strings, from the files and from the daemon")
    func nonFiniteRealsInJSON() throws {
        let plist = examplePlist(apiHost: "good.example.com").replacingOccurrences(
            of: "<key>Staging</key>\n    <dict>",
            with: "<key>Staging</key>\n    <dict><key>Ratio</key><real>inf</real><key>Odd</key><real>nan</real>"
                + "<key>Low</key><real>-inf</real><key>List</key><array><real>inf</real></array>")
        #expect(plist.contains("<real>nan</real>"))
        let daemon = try DaemonHarness(plist: plist)
        let files = try daemon.envctl([
            "show", "--json", "--config-dir", daemon.configDirectory.path, "--environment", "Staging",
        ])
        #expect(files.status == 0, "\(files.output)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(files.output.utf8)) as? [String: Any], "\(files.output)")
        let settings = try #require(object["settings"] as? [String: [String: Any]])
        #expect(settings["Ratio"]?["value"] as? String == "inf")
        #expect(settings["Odd"]?["value"] as? String == "nan")
        #expect(settings["Low"]?["value"] as? String == "-inf")
        #expect(settings["List"]?["value"] as? [String] == ["inf"])
        let get = try daemon.envctl([
            "get", "List", "--config-dir", daemon.configDirectory.path, "--environment", "Staging",
        ])
        #expect(get.status == 0 && get.output.contains("\"inf\""), "\(get.output)")

        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let running = try daemon.envctl(["show", "--json", "--pid", String(daemon.pid)])
        #expect(running.status == 0, "\(running.output)")
        #expect(running.output.contains("\"inf\""), "\(running.output)")
    }
}
