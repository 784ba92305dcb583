import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl set`, `unset` and `edit` at the same time as each other, killed half-way, and on
/// drop-ins whose permissions matter: every change that reports success is in the file, a
/// killed envctl leaves nothing that trips the next one or the daemon, and a replaced drop-in
/// keeps its owner, group, mode and ACL.
@Suite(.serialized, .blocking) struct EnvctlConcurrencyTests {
    typealias Directory = ExampleConfigurationDirectory

    /// An envctl started in the background, its output going to a file.
    final class Started {
        let process = Process()
        let outputPath: String

        init(_ arguments: [String], environment extra: [String: String] = [:], shell: String? = nil) throws {
            outputPath = NSTemporaryDirectory() + "envctl-out-\(UUID().uuidString.prefix(8))"
            _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
            if let shell {
                // `sh -c 'umask 077; exec envctl "$@"' sh ARGUMENTS...`
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", shell + "; exec \"$0\" \"$@\"", BuiltProducts.envctl] + arguments
            } else {
                process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
                process.arguments = arguments
            }
            var environment = ProcessInfo.processInfo.environment
            for key in ["APP_ENVIRONMENT", "APP_INSTANCE", "CONFIGURATION_DIRECTORY", "RUNTIME_DIRECTORY", "VISUAL"] {
                environment[key] = nil
            }
            environment.merge(extra) { _, new in new }
            process.environment = environment
            let output = FileHandle(forWritingAtPath: outputPath)
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
            try process.run()
        }

        deinit { unlink(outputPath) }

        /// Waits for the end; the exit status (or the signal's number, negated) and the output.
        func wait(while waiting: () -> Void = {}) -> (status: Int32, output: String) {
            while process.isRunning {
                waiting()
                usleep(2_000)
            }
            process.waitUntilExit()
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let status =
                process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
            return (status, output)
        }
    }

    /// The drop-in's `Common` dictionary.
    static func common(_ path: String) throws -> [String: Any] {
        let root = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: URL(fileURLWithPath: path)), format: nil)
                as? [String: Any])
        return root["Common"] as? [String: Any] ?? [:]
    }

    /// The drop-in directory's entries, sorted.
    static func entries(_ directory: Directory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/Environments.plist.d")) ?? [])
            .sorted()
    }

    /// A property list with `Common` holding `values`.
    static func plist(common values: [String: String]) -> String {
        let entries = values.sorted { $0.key < $1.key }.map { "<key>\($0.key)</key><string>\($0.value)</string>" }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict><key>Common</key><dict>\(entries.joined())</dict></dict>
            </plist>
            """
    }

    // MARK: Concurrent changes

    @Test func concurrentSetsOfDifferentKeysAreAllKept() throws {
        let directory = try Directory()
        var expected: [String: String] = [:]
        for round in 0..<2 {
            let values = Dictionary(uniqueKeysWithValues: (0..<12).map { ("R\(round)K\($0)", "value-\(round)-\($0)") })
            let started = try values.map { key, value in
                try Started(["set", "Concurrent.\(key)", value, "--config-dir", directory.path])
            }
            for process in started {
                let result = process.wait()
                #expect(result.status == 0, "\(result.output)")
            }
            expected.merge(values) { _, new in new }
            let concurrent = try #require(try Self.common(directory.dropIn)["Concurrent"] as? [String: String])
            #expect(concurrent == expected)
        }
        // Neither the lock nor a temporary file stays behind.
        #expect(Self.entries(directory) == ["90-local.plist"])
    }

    @Test func concurrentSetsAndUnsetsAreAllApplied() throws {
        let directory = try Directory()
        for round in 0..<2 {
            let removed = (0..<6).map { "Old\(round)K\($0)" }
            let added = (0..<6).map { "New\(round)K\($0)" }
            var before =
                try FileManager.default.fileExists(atPath: directory.dropIn) ? Self.common(directory.dropIn) : [:]
            for key in removed { before[key] = "old" }
            try Self.plist(common: before.compactMapValues { $0 as? String }).write(
                toFile: directory.dropIn, atomically: true, encoding: .utf8)

            var started = try removed.map { try Started(["unset", $0, "--config-dir", directory.path]) }
            started += try added.map { try Started(["set", $0, "new", "--config-dir", directory.path]) }
            for process in started {
                let result = process.wait()
                #expect(result.status == 0, "\(result.output)")
            }
            let common = try Self.common(directory.dropIn)
            for key in removed { #expect(common[key] == nil, "\(key) is still set") }
            for key in added { #expect(common[key] as? String == "new", "\(key) is missing") }
        }
        #expect(Self.entries(directory) == ["90-local.plist"])
    }

    /// A scripted `$EDITOR` that, while "editing", has another envctl change the drop-in, then
    /// writes `NEW_CONTENTS` over its copy.
    static func racingEditor(in directory: Directory) throws -> String {
        let path = directory.path + "/../racing-editor-\(UUID().uuidString.prefix(8)).sh"
        try writeExecutableScript(
            """
            #!/bin/sh
            "$ENVCTL" set Racing.Key from-set --config-dir "$CONFIG" >"$1.set-output" 2>&1 || exit 3
            cp "$NEW_CONTENTS" "$1"
            """, to: path)
        return path
    }

    @Test(arguments: [false, true])
    func editRefusesWhenTheDropInChangedWhileEditing(dropInExists: Bool) throws {
        let directory = try Directory()
        if dropInExists {
            try Self.plist(common: ["LogLevel": "warning"]).write(
                toFile: directory.dropIn, atomically: true, encoding: .utf8)
        }
        let editor = try Self.racingEditor(in: directory)
        let edited = directory.path + "/../edited-\(UUID().uuidString.prefix(8)).plist"
        let temporary = directory.path + "/../tmp-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        defer {
            unlink(editor)
            unlink(edited)
            try? FileManager.default.removeItem(atPath: temporary)
        }
        try Self.plist(common: ["LogLevel": "debug"]).write(toFile: edited, atomically: true, encoding: .utf8)

        let result = try Started(
            ["edit", "--config-dir", directory.path],
            environment: [
                "EDITOR": editor, "NEW_CONTENTS": edited, "ENVCTL": BuiltProducts.envctl, "CONFIG": directory.path,
                "TMPDIR": temporary,
            ]
        ).wait()
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("was changed by someone else while you edited it"), "\(result.output)")
        // The other change is in the file, the edit is not, and the edit is kept where it says.
        let common = try Self.common(directory.dropIn)
        #expect((common["Racing"] as? [String: String])?["Key"] == "from-set", "\(common)")
        #expect(common["LogLevel"] as? String == (dropInExists ? "warning" : nil))
        let kept = try #require(
            result.output.components(separatedBy: " is kept in ").dropFirst().first?.components(separatedBy: ". ").first
        )
        #expect(kept.hasPrefix(temporary))
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == Data(contentsOf: URL(fileURLWithPath: edited)))
        #expect(Self.entries(directory) == ["90-local.plist"])
    }

    // MARK: Killed envctl

    /// Holds the drop-in directory's lock as another envctl would.
    final class HeldLock {
        let descriptor: Int32
        let path: String
        init(_ directory: Directory) throws {
            path = directory.path + "/Environments.plist.d/.envctl.lock"
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else { throw POSIXError(.EIO) }
        }
        func release() { close(descriptor) }
    }

    /// Waits (at most 20 s) until process `pid` has `path` open.
    static func waitUntil(_ pid: Int32, opens path: String) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
            for descriptor in descriptors
            where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")) == path
            {
                return true
            }
            usleep(5_000)
        }
        return false
    }

    @Test func aSetWaitsForTheLockAndOneKilledWhileWaitingLeavesNothing() throws {
        let directory = try Directory()
        let lock = try HeldLock(directory)
        let killed = try Started(["set", "Killed", "x", "--config-dir", directory.path])
        let waiting = try Started(["set", "Waited", "y", "--config-dir", directory.path])
        #expect(Self.waitUntil(killed.process.processIdentifier, opens: lock.path))
        #expect(Self.waitUntil(waiting.process.processIdentifier, opens: lock.path))
        kill(killed.process.processIdentifier, SIGKILL)
        #expect(killed.wait().status == -SIGKILL)
        // Nothing was written while the lock was held, and the killed one left nothing.
        #expect(Self.entries(directory) == [".envctl.lock"])
        lock.release()
        let result = waiting.wait()
        #expect(result.status == 0, "\(result.output)")
        let common = try Self.common(directory.dropIn)
        #expect(common["Waited"] as? String == "y")
        #expect(common["Killed"] == nil)
        #expect(Self.entries(directory) == ["90-local.plist"])
    }

    @Test func envctlKilledAtAnyPointLeavesTheDropInWholeAndTheNextSetWorks() throws {
        let directory = try Directory()
        for attempt in 0..<10 {
            let started = try Started(["set", "Attempt\(attempt)", "x", "--config-dir", directory.path])
            usleep(UInt32(attempt) * 15_000)
            kill(started.process.processIdentifier, SIGKILL)
            _ = started.wait()
            // Whatever it got to: no drop-in, the old one or the new one, never part of one.
            if FileManager.default.fileExists(atPath: directory.dropIn) {
                _ = try Self.common(directory.dropIn)
            }
            // What it may leave is hidden: not a drop-in to the daemon or to envctl.
            #expect(Self.entries(directory).allSatisfy { $0 == "90-local.plist" || $0.hasPrefix(".") })
        }
        // Leftovers of a killed envctl as they would be if it died between writing its
        // temporary file and renaming it: a stale lock naming a gone process, a half-written copy.
        try "999999999\n".write(
            toFile: directory.path + "/Environments.plist.d/.envctl.lock", atomically: false, encoding: .utf8)
        try "<plist><dict><key>Comm".write(
            toFile: directory.path + "/Environments.plist.d/.90-local.plist.Ab12Cd.envctl-new", atomically: false,
            encoding: .utf8)
        let check = try runEnvctl(["check", "--environment", "Staging", "--config-dir", directory.path])
        #expect(check.status == 0, "\(check.output)")
        let result = try runEnvctl(["set", "Final", "z", "--config-dir", directory.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(try Self.common(directory.dropIn)["Final"] as? String == "z")
        #expect(Self.entries(directory) == ["90-local.plist"])
    }

    @Test("concurrent sets checked by the running daemon all apply, past a killed envctl's leftovers")
    func concurrentSetsWithTheRunningDaemon() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let dropIns = daemon.configDirectory.appendingPathComponent("Environments.plist.d").path
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        try "999999999\n".write(toFile: dropIns + "/.envctl.lock", atomically: false, encoding: .utf8)
        try "garbage".write(toFile: dropIns + "/.90-local.plist.Zz99Yy.envctl-new", atomically: false, encoding: .utf8)

        let keys = (0..<6).map { "Extra.K\($0)" }
        let started = try keys.map { key in
            try Started(
                ["set", key, "v-\(key)", "--pid", String(daemon.pid), "--allow-undeclared"],
                environment: ["RUNTIME_DIRECTORY": daemon.runtimeDirectory.path])
        }
        for process in started {
            let result = process.wait { daemon.notify.drain() }
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("by the running daemon"), "\(result.output)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dropIns).sorted() == ["90-local.plist"])
        // The daemon's watcher applies the result: every key, whatever order the sets ran in.
        let deadline = ContinuousClock.now + .seconds(20)
        var missing = keys
        while !missing.isEmpty, ContinuousClock.now < deadline {
            missing = try missing.filter { key in
                try daemon.envctl(["get", key, "--pid", String(daemon.pid)]).output != "v-\(key)\n"
            }
            if !missing.isEmpty { usleep(50_000) }
        }
        #expect(missing.isEmpty, "the daemon does not have \(missing)")
    }

    // MARK: Permissions

    /// An access ACL (`system.posix_acl_access`, version 2): the owner rw, user `user` r, the
    /// group r, mask r, others nothing — mode 0640 with one more reader.
    static func accessControlList(user: UInt32) -> [UInt8] {
        func entry(_ tag: UInt16, _ permissions: UInt16, _ id: UInt32) -> [UInt8] {
            withUnsafeBytes(of: tag.littleEndian, Array.init)
                + withUnsafeBytes(of: permissions.littleEndian, Array.init)
                + withUnsafeBytes(of: id.littleEndian, Array.init)
        }
        let undefined = UInt32.max
        return withUnsafeBytes(of: UInt32(2).littleEndian, Array.init) + entry(0x01, 6, undefined)
            + entry(0x02, 4, user) + entry(0x04, 4, undefined) + entry(0x10, 4, undefined)
            + entry(0x20, 0, undefined)
    }

    /// `getxattr(2)` and `setxattr(2)`, which Swift's Glibc module does not import.
    typealias GetAttribute =
        @convention(c) (UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?, Int)
        -> Int
    typealias SetAttribute =
        @convention(c) (
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeRawPointer?, Int, Int32
        ) -> Int32
    static func symbol<Function>(_ name: String) throws -> Function {
        let address = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), name))
        return unsafeBitCast(address, to: Function.self)
    }

    static func extendedAttribute(_ path: String, _ name: String) throws -> [UInt8]? {
        let getxattr: GetAttribute = try symbol("getxattr")
        let size = getxattr(path, name, nil, 0)
        guard size >= 0 else { return nil }
        var value = [UInt8](repeating: 0, count: size)
        let read = value.withUnsafeMutableBytes { getxattr(path, name, $0.baseAddress, size) }
        return read >= 0 ? Array(value[..<read]) : nil
    }

    static func setExtendedAttribute(_ path: String, _ name: String, _ value: [UInt8]) throws -> Bool {
        let setxattr: SetAttribute = try symbol("setxattr")
        return value.withUnsafeBytes { setxattr(path, name, $0.baseAddress, $0.count, 0) } == 0
    }

    static func status(_ path: String) throws -> stat {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw POSIXError(.ENOENT) }
        return status
    }

    struct PermissionCase: Sendable, CustomTestStringConvertible {
        var mode: mode_t
        var group: gid_t
        var withACL: Bool
        var testDescription: String { "\(String(mode, radix: 8)) root:\(group)\(withACL ? " with an ACL" : "")" }
    }

    @Test(arguments: [
        PermissionCase(mode: 0o640, group: 65534, withACL: true), PermissionCase(mode: 0o600, group: 0, withACL: false),
        PermissionCase(mode: 0o444, group: 65534, withACL: false),
    ])
    func aReplacedDropInKeepsItsOwnerGroupModeAndACL(_ example: PermissionCase) throws {
        try #require(geteuid() == 0, "needs root to give files away (the tests run as root)")
        let (mode, group, withACL) = (example.mode, example.group, example.withACL)
        let directory = try Directory()
        try Self.plist(common: ["LogLevel": "warning"]).write(
            toFile: directory.dropIn, atomically: true, encoding: .utf8)
        #expect(chown(directory.dropIn, 0, group) == 0)
        #expect(chmod(directory.dropIn, mode) == 0)
        let acl = Self.accessControlList(user: 65534)
        var aclSupported = false
        if withACL {
            aclSupported = try Self.setExtendedAttribute(directory.dropIn, "system.posix_acl_access", acl)
            // Only a file system without ACLs excuses the ACL part.
            #expect(aclSupported || errno == EOPNOTSUPP, "\(String(cString: strerror(errno)))")
        }
        let tag = Array("kept".utf8)
        let userAttributes = try Self.setExtendedAttribute(directory.dropIn, "user.envctl-test", tag)
        let before = try Self.status(directory.dropIn)

        for (index, arguments) in [["set", "LogLevel", "debug"], ["set", "Other", "x"], ["unset", "Other"]].enumerated()
        {
            let result = try runEnvctl(arguments + ["--config-dir", directory.path])
            #expect(result.status == 0, "\(result.output)")
            // (Later replacements may get the first file's inode number again.)
            if index == 0 {
                #expect(try Self.status(directory.dropIn).st_ino != before.st_ino, "replaced, not rewritten")
            }
        }
        let after = try Self.status(directory.dropIn)
        #expect(after.st_mode & 0o7777 == before.st_mode & 0o7777)
        #expect(after.st_uid == 0 && after.st_gid == group)
        if aclSupported {
            #expect(try Self.extendedAttribute(directory.dropIn, "system.posix_acl_access") == acl)
        }
        if userAttributes {
            #expect(try Self.extendedAttribute(directory.dropIn, "user.envctl-test") == tag)
        }
        #expect(try Self.common(directory.dropIn)["LogLevel"] as? String == "debug")
    }

    struct NewDropInCase: Sendable, CustomTestStringConvertible {
        var main: (mode: mode_t, group: gid_t)
        var siblings: [(name: String, mode: mode_t, group: gid_t)]
        var expected: (mode: mode_t, group: gid_t)
        var testDescription: String {
            "main \(String(main.mode, radix: 8)):\(main.group), siblings \(siblings.map { "\($0.name) \(String($0.mode, radix: 8)):\($0.group)" })"
        }
    }

    @Test(arguments: [
        NewDropInCase(main: (0o644, 0), siblings: [], expected: (0o644, 0)),
        NewDropInCase(main: (0o640, 65534), siblings: [], expected: (0o640, 65534)),
        NewDropInCase(main: (0o644, 0), siblings: [("10-secret.plist", 0o600, 0)], expected: (0o600, 0)),
        NewDropInCase(main: (0o640, 65534), siblings: [("10-public.plist", 0o644, 0)], expected: (0o640, 65534)),
        NewDropInCase(
            main: (0o644, 0), siblings: [("30-b.plist", 0o640, 0), ("20-a.plist", 0o640, 65534)],
            expected: (0o640, 65534)),
    ])
    func aNewDropInTakesThePermissionsOfTheMostRestrictiveFile(_ example: NewDropInCase) throws {
        try #require(geteuid() == 0, "needs root to give files away (the tests run as root)")
        let directory = try Directory()
        let main = directory.path + "/Environments.plist"
        #expect(chown(main, 0, example.main.group) == 0 && chmod(main, example.main.mode) == 0)
        for sibling in example.siblings {
            let path = directory.path + "/Environments.plist.d/" + sibling.name
            try Self.plist(common: [:]).write(toFile: path, atomically: true, encoding: .utf8)
            #expect(chown(path, 0, sibling.group) == 0 && chmod(path, sibling.mode) == 0)
        }
        // Whatever the umask.
        let result = try Started(["set", "LogLevel", "debug", "--config-dir", directory.path], shell: "umask 077")
            .wait()
        #expect(result.status == 0, "\(result.output)")
        let status = try Self.status(directory.dropIn)
        #expect(status.st_mode & 0o7777 == example.expected.mode, "\(String(status.st_mode & 0o7777, radix: 8))")
        #expect(status.st_gid == example.expected.group)
    }

    @Test func aSymbolicLinkIsNotReplaced() throws {
        let directory = try Directory()
        let target = directory.path + "/../target-\(UUID().uuidString.prefix(8)).plist"
        defer { unlink(target) }
        try Self.plist(common: ["LogLevel": "warning"]).write(toFile: target, atomically: true, encoding: .utf8)
        #expect(symlink(target, directory.dropIn) == 0)
        let before = try directory.contents()
        let result = try runEnvctl(["set", "LogLevel", "debug", "--config-dir", directory.path])
        #expect(result.status == 1)
        #expect(result.output.contains("is a symbolic link"), "\(result.output)")
        #expect(try directory.contents() == before)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: directory.dropIn)) == target)
    }
}
