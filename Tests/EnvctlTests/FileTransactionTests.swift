import Environments
import EnvironmentsDaemon
import Foundation
import Logging
import TestSupport
import Testing

@testable import EnvironmentsEditing
@testable import envctl

#if canImport(Glibc)
    import Glibc
#endif

/// Changes that span files land whole or not at all (issue 44 part 4): ``FileTransaction`` in
/// the test process, and `envctl migrate` and `credential set` as processes, failing on one
/// file (made immutable with `chattr +i`, which stops root too) or killed between two renames,
/// with a daemon in the test process that must not apply the state in between.
@Suite(.serialized, .blocking) struct FileTransactionTests {
    /// `chattr`, when it can make a file immutable here (the file system and the capability).
    static let chattr: String? = {
        guard let path = Command.path(of: "chattr") else { return nil }
        let probe = NSTemporaryDirectory() + "chattr-probe-\(UUID().uuidString.prefix(8))"
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else { return nil }
        defer {
            _ = try? runToEnd(path, ["-i", probe])
            unlink(probe)
        }
        guard (try? runToEnd(path, ["+i", probe]))?.status == 0 else { return nil }
        return path
    }()

    /// Makes `path` immutable (or mutable again).
    static func immutable(_ path: String, _ on: Bool = true) throws {
        let ran = try runToEnd(chattr ?? "chattr", [on ? "+i" : "-i", path])
        #expect(ran.status == 0, "\(ran.output)")
    }

    /// The names in `directory` that start with a dot: a change's leftovers, or its journal.
    static func hidden(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(".") }.sorted()
    }

    static func contents(_ paths: [String]) -> [Data?] {
        paths.map { FileManager.default.contents(atPath: $0) }
    }

    /// Writes `old INDEX` to `path` and returns the change that replaces it with `new INDEX`.
    static func numberedChange(of path: String, _ index: Int) throws -> FileTransaction.Change {
        try Data("old \(index)".utf8).write(to: URL(fileURLWithPath: path))
        return .init(
            file: DropInFile(path: path, mainFile: path), expected: Data("old \(index)".utf8),
            contents: Data("new \(index)".utf8))
    }

    // MARK: FileTransaction itself

    @Test(
        "a file that cannot be written (the fourth of six: its directory is immutable) leaves all six as they were, and nothing beside them",
        .enabled(if: chattr != nil, "needs chattr +i"))
    func failureBeforeAnyRename() throws {
        try withTemporaryFolder("envctl-transaction") { root in
            let directories = (1...6).map { "\(root)/d\($0)" }
            var changes: [FileTransaction.Change] = []
            for (index, directory) in directories.enumerated() {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                changes.append(try Self.numberedChange(of: directory + "/file.plist", index))
            }
            let before = Self.contents(changes.map(\.file.path))
            try Self.immutable(directories[3])
            defer { try? Self.immutable(directories[3], false) }

            #expect(throws: Failure.self) {
                try FileTransaction(journalDirectory: directories[0], command: "test").commit(changes)
            }
            #expect(Self.contents(changes.map(\.file.path)) == before)
            for directory in directories { #expect(try Self.hidden(directory) == [], "\(directory)") }
        }
    }

    @Test(
        "a rename that fails (the fourth of six is immutable) puts back the three replaced before it",
        .enabled(if: chattr != nil, "needs chattr +i"))
    func failedRenameIsUndone() throws {
        try withTemporaryFolder("envctl-transaction") { root in
            var changes: [FileTransaction.Change] = []
            for index in 0..<6 {
                changes.append(try Self.numberedChange(of: "\(root)/\(index).plist", index))
                chmod(changes[index].file.path, 0o640)
            }
            let before = Self.contents(changes.map(\.file.path))
            try Self.immutable(changes[3].file.path)
            defer { try? Self.immutable(changes[3].file.path, false) }
            var renamed: [Int] = []
            var transaction = FileTransaction(journalDirectory: root, command: "test")
            transaction.afterRename = { index in
                renamed.append(index)
                // The journal is there while the files are replaced.
                #expect(FileManager.default.fileExists(atPath: TransactionJournal.path(in: root)))
            }

            #expect(throws: Failure.self) { try transaction.commit(changes) }
            #expect(renamed == [0, 1, 2])
            #expect(Self.contents(changes.map(\.file.path)) == before)
            #expect(EnvctlCredentialTests.mode(changes[0].file.path) == 0o640)
            #expect(try Self.hidden(root) == [])
        }
    }

    @Test("a change killed while it was being undone is undone by the next envctl that takes the lock")
    func interruptedUndoIsFinished() throws {
        try withTemporaryFolder("envctl-transaction") { root in
            // As a killed envctl leaves it: a.plist replaced (its old copy kept), b.plist not yet
            // (its new file waiting), c.plist created.
            func write(_ text: String, _ name: String) throws -> String {
                try text.write(toFile: root + "/" + name, atomically: true, encoding: .utf8)
                return root + "/" + name
            }
            let a = try write("new a", "a.plist")
            let aOld = try write("old a", ".a.plist.AAAAAAAA.envctl-old")
            let b = try write("old b", "b.plist")
            let bNew = try write("new b", ".b.plist.BBBBBBBB.envctl-new")
            let bOld = try write("old b", ".b.plist.BBBBBBBB.envctl-old")
            let c = try write("new c", "c.plist")
            var journal = TransactionJournal(
                command: "envctl test", process: 1,
                entries: [
                    .init(target: a, new: root + "/.a.plist.AAAAAAAA.envctl-new", old: aOld),
                    .init(target: b, new: bNew, old: bOld),
                    .init(target: c, new: root + "/.c.plist.CCCCCCCC.envctl-new", old: nil),
                ])
            journal.rollingBack = true
            try journal.encoded().write(to: URL(fileURLWithPath: TransactionJournal.path(in: root)))

            let file = DropInFile(path: a, mainFile: a)
            try file.withLock {}
            #expect(Self.contents([a, b]) == [Data("old a".utf8), Data("old b".utf8)])
            #expect(!FileManager.default.fileExists(atPath: c))
            #expect(try Self.hidden(root) == [])
        }
    }

    @Test("a journal that envctl did not write (naming a file elsewhere) is a failed load that names it")
    func foreignJournal() throws {
        let files = try TemporaryConfiguration(
            "transaction-foreign", plist: Self.plist("<key>Production</key><dict/>"),
            directories: ["etc/Environments.plist.d"])
        let dropIns = files.configDirectory + "/Environments.plist.d"
        let journal = TransactionJournal(
            command: "envctl migrate", process: 1,
            entries: [.init(target: files.mainFile, new: dropIns + "/.x.envctl-new", old: "/etc/shadow")])
        try journal.encoded().write(to: URL(fileURLWithPath: TransactionJournal.path(in: dropIns)))
        let options = EnvironmentOptions(
            applicationName: "transaction-tests", environment: "Production", configDirectory: files.configDirectory)
        #expect {
            _ = try Environment(options: options)
        } throws: { error in
            (error as? EnvironmentError)?.code == .fileUnreadable
                && (error as? EnvironmentError)?.file == TransactionJournal.path(in: dropIns)
        }
        let check = try EnvctlMigrateTests.envctl(["check", "--config-dir", files.configDirectory])
        #expect(check.status != 0, "\(check.output)")
        #expect(check.output.contains("is not the journal of a change that envctl makes"), "\(check.output)")
    }

    // MARK: migrate

    /// Six settings with former names, one in each of six files.
    static let sixDeclaration = SettingsDeclaration(
        (1...6).map { Setting<String>("Name\($0)", default: "d", formerNames: ["Old\($0)"]) })

    static func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        \(body)
        </dict></plist>
        """
    }

    @Test(
        "migrate failing on the fourth of six files leaves all six as they were; once it can, a second run migrates them",
        .enabled(if: chattr != nil, "needs chattr +i"))
    func migrateFailingMidway() throws {
        let files = try TemporaryConfiguration(
            "transaction",
            plist: Self.plist(
                "<key>Common</key><dict><key>Old1</key><string>one</string></dict><key>Production</key><dict/>"),
            directories: ["etc/Environments.plist.d"])
        let dropIns = files.configDirectory + "/Environments.plist.d"
        let paths = [files.mainFile] + (2...6).map { "\(dropIns)/\($0)0-part.plist" }
        for index in 2...6 {
            try Self.plist("<key>Common</key><dict><key>Old\(index)</key><string>v\(index)</string></dict>")
                .write(toFile: paths[index - 1], atomically: true, encoding: .utf8)
        }
        let schema = files.root + "/schema.json"
        try Self.sixDeclaration.jsonSchema(title: "transaction").write(to: URL(fileURLWithPath: schema))
        let before = Self.contents(paths)
        try Self.immutable(paths[3])
        defer { try? Self.immutable(paths[3], false) }
        let arguments = ["migrate", "--schema", schema, "--config-dir", files.configDirectory]

        let failed = try EnvctlMigrateTests.envctl(arguments)
        #expect(failed.status != 0, "\(failed.output)")
        #expect(failed.output.contains("cannot replace \(paths[3])"), "\(failed.output)")
        #expect(Self.contents(paths) == before)
        #expect(try Self.hidden(dropIns) == [])
        #expect(try Self.hidden(files.configDirectory) == [])

        try Self.immutable(paths[3], false)
        let migrated = try EnvctlMigrateTests.envctl(arguments)
        #expect(migrated.status == 0, "\(migrated.output)")
        #expect(migrated.output.contains("migrated 6 former names in 6 files"), "\(migrated.output)")
        for (index, path) in paths.enumerated() {
            #expect(try String(contentsOfFile: path, encoding: .utf8).contains("<key>Name\(index + 1)</key>"))
        }
    }

    /// The declaration of the daemon and of migrate: `Greeting`, formerly `Salutation`.
    static let greetingDeclaration = SettingsDeclaration([
        Setting<String>("Greeting", default: "hi", formerNames: ["Salutation"])
    ])

    /// Starts envctl with `arguments`, pausing `pause` milliseconds after each rename of a change
    /// that spans files; its output is dropped.
    static func start(_ arguments: [String], pause: Int, environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
        process.arguments = arguments
        process.environment = operatorEnvironment(
            environment.merging([FileTransaction.testPauseVariable: "\(pause)"]) { _, new in new })
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits (at most 60 s) until `condition` holds.
    static func wait(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw Failure("timed out waiting: \(what)") }
            usleep(10_000)
        }
    }

    @Test(
        "a migrate killed between its renames: the daemon keeps the value from before, says so, and applies the whole change once the next envctl completes it"
    )
    func migrateKilledMidway() async throws {
        let files = try TemporaryConfiguration(
            "transaction-kill",
            plist: Self.plist(
                "<key>Common</key><dict><key>Salutation</key><string>common</string></dict><key>Production</key><dict/>"
            ), directories: ["etc/Environments.plist.d"])
        let dropIns = files.configDirectory + "/Environments.plist.d"
        let dropIn = dropIns + "/50-production.plist"
        try Self.plist("<key>Production</key><dict><key>Salutation</key><string>production</string></dict>")
            .write(toFile: dropIn, atomically: true, encoding: .utf8)
        let schema = files.root + "/schema.json"
        try Self.greetingDeclaration.jsonSchema(title: "transaction").write(to: URL(fileURLWithPath: schema))
        var options = EnvironmentOptions(
            applicationName: "transaction-tests", environment: "Production", configDirectory: files.configDirectory)
        options.declaration = Self.greetingDeclaration
        let environment = try Environment(options: options)
        #expect(environment.snapshot.fetch("Greeting") as? String == "production")
        let service = EnvironmentService(
            environment: environment, reloadSignals: nil,
            configuration: .inTest(controlSocket: nil, watchFiles: true), logger: Logger(label: "transaction-tests"))
        let journal = TransactionJournal.path(in: dropIns)
        let (configDirectory, mainFile, root, before) = (files.configDirectory, files.mainFile, files.root, options)

        try await service.whileRunning {
            let migrate = try Self.start(
                ["migrate", "--schema", schema, "--config-dir", configDirectory], pause: 60_000)
            // Killed once the main file is replaced and the drop-in is not.
            try await onThread {
                try Self.wait("the main file renamed") {
                    (try? String(contentsOfFile: mainFile, encoding: .utf8))?.contains("Greeting") == true
                }
            }
            kill(migrate.processIdentifier, SIGKILL)
            migrate.waitUntilExit()
            #expect(FileManager.default.fileExists(atPath: journal))
            #expect(try String(contentsOfFile: dropIn, encoding: .utf8).contains("Salutation"))

            // The files as they are now, read without the journal, are the state in between.
            let copy = root + "/in-between"
            try FileManager.default.copyItem(atPath: configDirectory, toPath: copy)
            try FileManager.default.removeItem(atPath: TransactionJournal.path(in: copy + "/Environments.plist.d"))
            var inBetween = before
            inBetween.configDirectory = copy
            #expect(try Environment(options: inBetween).snapshot.fetch("Greeting") as? String == "common")

            // The daemon, reloading now, keeps the state before the change, and warns.
            await service.reloader.reload(trigger: .control)
            #expect(environment.snapshot.fetch("Greeting") as? String == "production")
            let warning = environment.snapshot.warnings.first { $0.code == .changeUnderWay }
            #expect(warning?.description.contains("envctl migrate --resume") == true, "\(String(describing: warning))")

            // The next envctl completes it; the daemon's watcher sees the journal go.
            let resumed = try await onThread {
                try EnvctlMigrateTests.envctl(["migrate", "--resume", "--config-dir", configDirectory])
            }
            #expect(resumed.status == 0, "\(resumed.output)")
            #expect(resumed.output.contains("completed the change envctl migrate"), "\(resumed.output)")
            #expect(!FileManager.default.fileExists(atPath: journal))
            #expect(try String(contentsOfFile: dropIn, encoding: .utf8).contains("<key>Greeting</key>"))
            #expect(try Self.hidden(dropIns) == [])
            try await onThread {
                try Self.wait("the daemon reloading without the journal") {
                    !environment.snapshot.warnings.contains { $0.code == .changeUnderWay }
                }
            }
            #expect(environment.snapshot.fetch("Greeting") as? String == "production")
            #expect(environment.snapshot.configuredValue(forKey: "Greeting")?.source.file == dropIn)
        }
        withExtendedLifetime(files) {}
    }

    // MARK: credential set

    @Test(
        "credential set killed between its two files: the next one completes the change, then makes its own",
        .enabled(if: EnvctlCredentialTests.hasSystemdCreds, "needs systemd-creds (systemd 250 or later)"))
    func credentialKilledMidway() throws {
        let files = try EnvctlCredentialTests.Files()
        let secret = try files.write("first-secret", to: "secret")
        let arguments =
            ["credential", "set", "db-password", "--from-file", secret, "--with-key", "host", "--no-reload"]
            + files.location
        let killed = try Self.start(arguments, pause: 60_000, environment: files.environment)
        try Self.wait("the encrypted file renamed") { FileManager.default.fileExists(atPath: files.encrypted) }
        kill(killed.processIdentifier, SIGKILL)
        killed.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: TransactionJournal.path(in: files.credentialStore)))
        #expect(!FileManager.default.fileExists(atPath: files.dropIn))

        let rotated = try files.write("second-secret", to: "secret")
        let next = try EnvctlCredentialTests.envctl(
            ["credential", "set", "db-password", "--from-file", rotated, "--with-key", "host", "--no-reload"]
                + files.location, files)
        #expect(next.status == 0, "\(next)")
        #expect(next.standardError.contains("completed the change envctl credential set"), "\(next)")
        #expect(try EnvctlCredentialTests.decrypt(files) == "second-secret")
        #expect(
            try String(contentsOfFile: files.dropIn, encoding: .utf8).contains(
                "LoadCredentialEncrypted=db-password:\(files.encrypted)"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: files.credentialStore) == ["example-daemon.db-password"]
        )
    }

    @Test(
        "credential set that cannot replace the unit drop-in leaves the encrypted file as it was",
        .enabled(
            if: EnvctlCredentialTests.hasSystemdCreds && chattr != nil, "needs systemd-creds and chattr +i"))
    func credentialFailingOnTheDropIn() throws {
        let files = try EnvctlCredentialTests.Files()
        let arguments = { (secret: String) in
            ["credential", "set", "db-password", "--from-file", secret, "--with-key", "host", "--no-reload"]
                + files.location
        }
        let first = try EnvctlCredentialTests.envctl(arguments(try files.write("first-secret", to: "secret")), files)
        #expect(first.status == 0, "\(first)")
        // An operator's note in the drop-in, which the next set rewrites; the drop-in is immutable.
        try (String(contentsOfFile: files.dropIn, encoding: .utf8) + "# note\n").write(
            toFile: files.dropIn, atomically: true, encoding: .utf8)
        let before = Self.contents([files.encrypted, files.dropIn])
        try Self.immutable(files.dropIn)
        defer { try? Self.immutable(files.dropIn, false) }

        let failed = try EnvctlCredentialTests.envctl(arguments(try files.write("second-secret", to: "secret")), files)
        #expect(failed.status != 0, "\(failed)")
        #expect(failed.output.contains("cannot replace \(files.dropIn)"), "\(failed)")
        #expect(Self.contents([files.encrypted, files.dropIn]) == before)
        #expect(try EnvctlCredentialTests.decrypt(files) == "first-secret")
        #expect(try Self.hidden(files.credentialStore) == [])
    }
}
