import EnvironmentsControl
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl set` and `edit` when others change things under them: what someone put in a
/// group-writable drop-in directory under the lock's name is never written, and a daemon
/// restarted into another environment during an edit does not let through an edit that was
/// checked for neither.
@Suite(.serialized, .blocking) struct EnvctlUnderChangeTests {
    typealias Directory = ExampleConfigurationDirectory
    typealias Started = EnvctlConcurrencyTests.Started

    /// The drop-in directory made group-writable, as where a group of operators changes drop-ins.
    static func groupWritable(_ directory: Directory) -> String {
        let dropIns = directory.path + "/Environments.plist.d"
        chown(dropIns, 0, 65534)
        chmod(dropIns, 0o2775)
        return dropIns
    }

    /// Owned by root as envctl's caller (`0`), or by another user (`65534`).
    @Test(arguments: [UInt32(0), 65534])
    func aHardLinkPlantedAsTheLockIsNotWritten(targetOwner: UInt32) throws {
        let directory = try Directory()
        let dropIns = Self.groupWritable(directory)
        let target = directory.path + "/../precious-\(UUID().uuidString.prefix(8))"
        defer { unlink(target) }
        try "precious: not a lock\n".write(toFile: target, atomically: false, encoding: .utf8)
        chown(target, targetOwner, targetOwner)
        chmod(target, 0o600)
        let lock = dropIns + "/.envctl.lock"
        #expect(link(target, lock) == 0)
        let before = try FileFingerprint(target)

        let result = try runEnvctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("\(lock) is a file with 2 names (hard links)"), "\(result.output)")
        #expect(result.output.contains("rm \(lock)"), "\(result.output)")
        #expect(try FileFingerprint(target) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.dropIn))

        // Once it is removed, as the message says, the next set works.
        unlink(lock)
        let again = try runEnvctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(again.status == 0, "\(again.output)")
        #expect(try FileFingerprint(target) == before)
        #expect(EnvctlConcurrencyTests.entries(directory) == ["90-local.plist"])
    }

    @Test func aSymbolicLinkPlantedAsTheLockIsNotFollowed() throws {
        let directory = try Directory()
        let dropIns = Self.groupWritable(directory)
        let target = directory.path + "/../precious-\(UUID().uuidString.prefix(8))"
        defer { unlink(target) }
        try "precious: not a lock\n".write(toFile: target, atomically: false, encoding: .utf8)
        chmod(target, 0o600)
        let lock = dropIns + "/.envctl.lock"
        #expect(symlink(target, lock) == 0)
        let before = try FileFingerprint(target)
        // A dangling one, too: following it would make a file where it points.
        let nowhere = directory.path + "/../nowhere-\(UUID().uuidString.prefix(8))"

        let result = try runEnvctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("\(lock) is a symbolic link (to \(target))"), "\(result.output)")
        #expect(try FileFingerprint(target) == before)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: lock)) == target)

        unlink(lock)
        #expect(symlink(nowhere, lock) == 0)
        let dangling = try runEnvctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(dangling.status == 1, "\(dangling.output)")
        #expect(!FileManager.default.fileExists(atPath: nowhere))
        #expect(!FileManager.default.fileExists(atPath: directory.dropIn))
    }

    @Test("a lock file left by another user's killed envctl is taken without being written, and replaced")
    func anotherUsersLeftoverLockIsNotWritten() throws {
        let directory = try Directory()
        let dropIns = Self.groupWritable(directory)
        let lock = dropIns + "/.envctl.lock"
        try "999999999\n".write(toFile: lock, atomically: false, encoding: .utf8)
        chown(lock, 65534, 65534)
        chmod(lock, 0o644)
        // A second name for it, outside, to see the very file afterwards.
        let witness = directory.path + "/../witness-\(UUID().uuidString.prefix(8))"
        defer { unlink(witness) }
        let result = try runEnvctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(EnvctlConcurrencyTests.entries(directory) == ["90-local.plist"])

        // Once more, watching the file: envctl's own lock is made anew, for the group to read.
        try "999999999\n".write(toFile: lock, atomically: false, encoding: .utf8)
        chown(lock, 65534, 65534)
        chmod(lock, 0o644)
        let before = try FileFingerprint(lock)
        let holder = try EnvctlConcurrencyTests.HeldLock(directory)
        let started = try Started(["set", "LogLevel", "warning", "--config-dir", directory.path])
        #expect(EnvctlConcurrencyTests.waitUntil(started.process.processIdentifier, opens: lock))
        #expect(link(lock, witness) == 0)
        holder.release()
        let done = started.wait()
        #expect(done.status == 0, "\(done.output)")
        #expect(try FileFingerprint(witness) == before)
        #expect(try EnvctlConcurrencyTests.common(directory.dropIn)["LogLevel"] as? String == "warning")
    }

    /// A scripted `$EDITOR` that says it is editing (`$1.editing`), waits until the test says
    /// `$1.go` (having restarted the daemon meanwhile), then copies `NEW_CONTENTS` over its copy.
    static func waitingEditor(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("waiting-editor.sh").path
        try writeExecutableScript(
            """
            #!/bin/sh
            touch "$MARKERS/editing"
            while [ ! -e "$MARKERS/go" ]; do sleep 0.05; done
            cp "$NEW_CONTENTS" "$1"
            """, to: path)
        return path
    }

    /// The example configuration with a Production environment too.
    static let twoEnvironments = examplePlist().replacingOccurrences(
        of: "<key>RestartRequired</key>",
        with:
            "<key>Production</key><dict><key>APIHost</key><string>api.example.com</string>"
            + "<key>Database</key><dict><key>Password</key><string>test-only</string></dict></dict>\n"
            + "    <key>RestartRequired</key>")

    @Test(
        "an edit opened against the daemon's environment is not installed once it runs another",
        arguments: ["Production", "Staging"])
    func aDaemonRestartedIntoAnotherEnvironmentDuringAnEdit(restartedInto: String) throws {
        let daemon = try DaemonHarness(plist: Self.twoEnvironments)
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let markers = daemon.root.appendingPathComponent("markers")
        try FileManager.default.createDirectory(at: markers, withIntermediateDirectories: true)
        let editor = try Self.waitingEditor(in: daemon.root)
        // Valid for the files in every environment, and for the daemon in Production; the
        // example daemon's own validation (http or https) refuses it in Staging.
        let edited = daemon.root.appendingPathComponent("edited.plist").path
        try plistDocument(
            """
                <key>Staging</key>
                <dict><key>APIBaseUrl</key><string>ftp://files.example.com</string></dict>
            """
        ).write(toFile: edited, atomically: true, encoding: .utf8)
        let socket = daemon.runtimeDirectory.appendingPathComponent(ControlInterface.socketFileName).path
        let temporary = daemon.root.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)

        let started = try Started(
            ["edit", "--socket", socket],
            environment: [
                "EDITOR": editor, "NEW_CONTENTS": edited, "MARKERS": markers.path, "TMPDIR": temporary.path,
            ])
        var restarted = false
        var failure: String?
        let result = started.wait {
            daemon.notify.drain()
            guard !restarted, FileManager.default.fileExists(atPath: markers.appendingPathComponent("editing").path)
            else { return }
            restarted = true
            // Restarted as systemd would, into another environment (or the same one).
            daemon.signal(SIGTERM)
            if daemon.waitForExit() == nil { failure = "the daemon did not stop" }
            do {
                try daemon.start(arguments: ["--environment", restartedInto])
                if daemon.waitForDatagram(
                    timeout: .seconds(30), { $0.contains("READY=1") && $0.contains(restartedInto) })
                    == nil
                {
                    failure = "the daemon did not start again in \(restartedInto): \(daemon.log)"
                }
            } catch {
                failure = "\(error)"
            }
            // The scripted editor waits for this marker (waitingEditor): without it, it never ends.
            if !FileManager.default.createFile(atPath: markers.appendingPathComponent("go").path, contents: nil) {
                failure = failure ?? "could not create the marker \"go\" in \(markers.path)"
            }
        }
        #expect(restarted)
        #expect(failure == nil, "\(failure ?? "")")
        let dropIn = daemon.configDirectory.appendingPathComponent("Environments.plist.d/90-local.plist").path
        if restartedInto == "Staging" {
            // Restarted into the same environment: its check is the one the edit was opened
            // for, and it refuses the edit as it would have before.
            #expect(result.status == 1, "\(result.output)")
            #expect(result.output.contains("is not a URL with the scheme http or https"), "\(result.output)")
            #expect(!result.output.contains("restarted"), "\(result.output)")
        } else {
            #expect(result.status == 1, "\(result.output)")
            #expect(
                result.output.contains(
                    "the daemon was restarted while this change was made: it now runs environment Production"),
                "\(result.output)")
            #expect(result.output.contains("not environment Staging"), "\(result.output)")
            // The kept version, and how to check it against what runs now.
            let kept = try #require(
                result.output.components(separatedBy: "is kept in ").dropFirst().first?
                    .components(separatedBy: ";").first, "\(result.output)")
            #expect(kept.hasPrefix(temporary.path), "\(kept)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == Data(contentsOf: URL(fileURLWithPath: edited)))
            #expect(result.output.contains("VISUAL='cp -- \(kept)' envctl edit --socket \(socket)"), "\(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: dropIn))
    }
}
