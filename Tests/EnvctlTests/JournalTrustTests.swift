import Environments
import Foundation
import TestSupport
import Testing

@testable import EnvironmentsEditing
@testable import envctl

#if canImport(Glibc)
    import Glibc
#endif

/// The journal of a change that spans files is an instruction that envctl, often root, follows
/// (issue 53 item 1): only one that belongs to root or envctl's user, naming only the files of
/// its configuration, is followed; and a kill at any step of completing or undoing a change
/// leaves a state that loads as before the change or after it (item 2).
@Suite(.serialized, .blocking) struct JournalTrustTests {
    static func plist(_ body: String) -> String { FileTransactionTests.plist(body) }

    /// A configuration with one drop-in, `50-production.plist`, and a file outside it.
    struct Files {
        let configuration: TemporaryConfiguration
        var dropIns: String { configuration.configDirectory + "/Environments.plist.d" }
        var dropIn: String { dropIns + "/50-production.plist" }
        var journal: String { TransactionJournal.path(in: dropIns) }
        var victim: String { configuration.root + "/victim" }

        init(_ name: String) throws {
            configuration = try TemporaryConfiguration(
                name,
                plist: JournalTrustTests.plist(
                    "<key>Common</key><dict><key>Salutation</key><string>common</string></dict><key>Production</key><dict/>"
                ), directories: ["etc/Environments.plist.d"])
            try JournalTrustTests.plist(
                "<key>Production</key><dict><key>Salutation</key><string>production</string></dict>"
            ).write(toFile: dropIn, atomically: true, encoding: .utf8)
            try "not configuration".write(toFile: victim, atomically: true, encoding: .utf8)
        }

        /// Writes a journal of a change being undone that created `target`: following it
        /// removes `target`.
        func plantJournal(removing target: String) throws {
            let directory = (target as NSString).deletingLastPathComponent
            var planted = TransactionJournal(
                command: "envctl migrate", process: 1,
                entries: [.init(target: target, new: directory + "/.x.AAAAAAAA.envctl-new", old: nil)])
            planted.rollingBack = true
            try planted.encoded().write(to: URL(fileURLWithPath: journal))
        }

        var set: [String] {
            ["set", "LogLevel", "debug", "--config-dir", configuration.configDirectory]
        }
    }

    @Test("a journal naming a file outside its configuration is refused by set, naming the journal; no file is touched")
    func journalNamingAnotherFile() throws {
        let files = try Files("journal-outside")
        try files.plantJournal(removing: files.victim)
        let before = FileTransactionTests.contents([files.configuration.mainFile, files.dropIn, files.victim])

        let set = try EnvctlMigrateTests.envctl(files.set)
        #expect(set.status != 0, "\(set.output)")
        #expect(set.output.contains(files.journal), "\(set.output)")
        #expect(set.output.contains("nothing was written") || set.output.contains("not the journal"), "\(set.output)")
        #expect(FileTransactionTests.contents([files.configuration.mainFile, files.dropIn, files.victim]) == before)
        #expect(FileManager.default.fileExists(atPath: files.journal))

        // FileTransaction itself, as every command that takes the lock calls it.
        #expect {
            try FileTransaction.recover(
                in: files.dropIns,
                scope: .configuration(mainFile: files.configuration.mainFile, dropInDirectory: files.dropIns),
                note: { _ in })
        } throws: { error in
            "\(error)".contains("refusing the journal \(files.journal)") && "\(error)".contains(files.victim)
        }
        #expect(FileManager.default.fileExists(atPath: files.victim))
    }

    @Test("a journal naming a hidden file or the lock of its configuration, or a file in a subdirectory, is refused")
    func journalNamingHiddenOrNested() throws {
        let files = try Files("journal-hidden")
        try FileManager.default.createDirectory(atPath: files.dropIns + "/sub", withIntermediateDirectories: true)
        let nested = files.dropIns + "/sub/nested.plist"
        try "x".write(toFile: nested, atomically: true, encoding: .utf8)
        let scope = JournalScope.configuration(mainFile: files.configuration.mainFile, dropInDirectory: files.dropIns)
        for target in [nested, files.dropIns + "/.hidden.plist", files.dropIns + "/notes.txt", files.victim] {
            try files.plantJournal(removing: target)
            #expect(throws: Failure.self, "\(target)") {
                try FileTransaction.recover(in: files.dropIns, scope: scope, note: { _ in })
            }
        }
        #expect(FileManager.default.fileExists(atPath: nested))
        // One that names a drop-in of the configuration is followed.
        try files.plantJournal(removing: files.dropIns + "/60-created.plist")
        try "x".write(toFile: files.dropIns + "/60-created.plist", atomically: true, encoding: .utf8)
        try FileTransaction.recover(in: files.dropIns, scope: scope, note: { _ in })
        #expect(!FileManager.default.fileExists(atPath: files.dropIns + "/60-created.plist"))
        #expect(!FileManager.default.fileExists(atPath: files.journal))
    }

    @Test("a load refuses a journal that names a file outside the configuration, naming the journal")
    func loadRefusesJournalNamingAnotherFile() throws {
        let files = try Files("journal-load")
        try files.plantJournal(removing: files.victim)
        let options = EnvironmentOptions(
            applicationName: "journal-tests", environment: "Production",
            configDirectory: files.configuration.configDirectory)
        #expect {
            _ = try Environment(options: options)
        } throws: { error in
            (error as? EnvironmentError)?.code == .fileUnreadable
                && (error as? EnvironmentError)?.file == files.journal
                && "\(error)".contains(files.victim)
        }
    }

    @Test(
        "a journal that belongs to another user is refused by root's set, naming the journal and its owner; no file is touched"
    )
    func journalOfAnotherUser() throws {
        try #require(geteuid() == 0, "needs root, to give the journal to another user")
        let files = try Files("journal-owner")
        try files.plantJournal(removing: files.dropIn)
        chown(files.journal, 65534, 65534)
        let before = FileTransactionTests.contents([files.configuration.mainFile, files.dropIn])

        let set = try EnvctlMigrateTests.envctl(files.set)
        #expect(set.status != 0, "\(set.output)")
        #expect(set.output.contains("refusing the journal \(files.journal)"), "\(set.output)")
        #expect(set.output.contains("uid 65534"), "\(set.output)")
        #expect(FileTransactionTests.contents([files.configuration.mainFile, files.dropIn]) == before)
        #expect(FileManager.default.fileExists(atPath: files.journal))

        // Given back to root, the same journal is followed.
        chown(files.journal, 0, 0)
        let again = try EnvctlMigrateTests.envctl(files.set)
        #expect(again.status == 0, "\(again.output)")
        #expect(!FileManager.default.fileExists(atPath: files.journal))
    }

    @Test("a journal that is a symbolic link is not followed")
    func journalThatIsALink() throws {
        let files = try Files("journal-link")
        let elsewhere = files.configuration.root + "/journal"
        var journal = TransactionJournal(
            command: "envctl migrate", process: 1,
            entries: [.init(target: files.dropIn, new: files.dropIns + "/.x.AAAAAAAA.envctl-new", old: nil)])
        journal.rollingBack = true
        try journal.encoded().write(to: URL(fileURLWithPath: elsewhere))
        symlink(elsewhere, files.journal)
        let set = try EnvctlMigrateTests.envctl(files.set)
        #expect(set.status != 0, "\(set.output)")
        #expect(set.output.contains(files.journal), "\(set.output)")
        #expect(FileManager.default.fileExists(atPath: files.dropIn))
    }

    @Test("credential set's journal may name a credential in the store and its unit drop-in, and nothing else")
    func credentialScope() {
        let scope = CredentialFiles.journalScope(store: "/nonexistent/store", unitDirectory: "/nonexistent/units")
        #expect(scope.mayName("/nonexistent/store/app.db-password"))
        #expect(scope.mayName("/nonexistent/units/app.service.d/90-credential-db-password.conf"))
        for outside in [
            "/nonexistent/store/.hidden", "/etc/shadow", "/nonexistent/units/app.service.d/override.conf",
            "/nonexistent/units/app.service", "/nonexistent/store/sub/app.db-password",
        ] {
            #expect(!scope.mayName(outside), "\(outside)")
        }
    }

    // MARK: Killed at every step

    /// What a load reads: `Salutation` and `Greeting` in Production.
    struct State: Equatable, CustomStringConvertible {
        var salutation: String?
        var greeting: String?
        var description: String { "Salutation=\(salutation ?? "-") Greeting=\(greeting ?? "-")" }
    }

    static func load(_ configDirectory: String) throws -> State {
        let options = EnvironmentOptions(
            applicationName: "journal-tests", environment: "Production", configDirectory: configDirectory)
        let snapshot = try Environment(options: options).snapshot
        return State(
            salutation: snapshot.fetch("Salutation") as? String, greeting: snapshot.fetch("Greeting") as? String)
    }

    /// Runs envctl with `environment` added; whether it was killed (by its own SIGKILL).
    static func runKilled(_ arguments: [String], environment: [String: String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
        process.arguments = arguments
        process.environment = operatorEnvironment(environment)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }

    @Test(
        "migrate killed at every step of completing, and of undoing, its change: every load reads the state before it or after it, and the next envctl finishes",
        arguments: [false, true])
    func killedAtEveryStep(undoing: Bool) throws {
        let before = State(salutation: "production", greeting: nil)
        let after = State(salutation: nil, greeting: "production")
        var step = 1
        var killedSteps = 0
        var undone = 0
        while step < 100 {
            let files = try Files("journal-kill-\(undoing ? "undo" : "complete")-\(step)")
            let configDirectory = files.configuration.configDirectory
            let schema = files.configuration.root + "/schema.json"
            try FileTransactionTests.greetingDeclaration.jsonSchema(title: "transaction")
                .write(to: URL(fileURLWithPath: schema))
            #expect(try Self.load(configDirectory) == before)
            var environment = [FaultInjection.killVariable: "\(step)"]
            if undoing { environment[FaultInjection.failRenameVariable] = "1" }
            let killed = try Self.runKilled(
                ["migrate", "--schema", schema, "--config-dir", configDirectory], environment: environment)
            guard killed else { break }
            killedSteps += 1
            let state = try Self.load(configDirectory)
            #expect(state == before || state == after, "killed at step \(step): \(state)")

            let resumed = try EnvctlMigrateTests.envctl(["migrate", "--resume", "--config-dir", configDirectory])
            #expect(resumed.status == 0, "step \(step): \(resumed.output)")
            let finished = try Self.load(configDirectory)
            #expect(finished == before || finished == after, "resumed after step \(step): \(finished)")
            // Killed once the undo began, the next envctl finishes undoing it (before that, the
            // change was decided and is completed).
            if finished == before { undone += 1 }
            #expect(!FileManager.default.fileExists(atPath: files.journal))
            step += 1
        }
        // Every step of preparing, the journal, the renames (or the undo) and the cleaning up.
        #expect(killedSteps >= (undoing ? 10 : 8), "\(killedSteps) steps")
        if undoing { #expect(undone >= 7, "\(undone) of \(killedSteps) undone") }
    }
}
