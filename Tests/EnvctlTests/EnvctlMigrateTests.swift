import Environments
import EnvironmentsDaemon
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl migrate` renames former names through the same safe path as `set` (checked,
/// locked, owner and mode kept), and `envctl schema` falls back to the installed schema
/// (issue 33).
@Suite(.serialized, .blocking) struct EnvctlMigrateTests {
    static let declaration = SettingsDeclaration([
        Setting<String>("APIHost", default: "api.example.com", formerNames: ["ApiHost"]),
        Setting<String>("LogLevel", default: "info"),
        Setting<String>("Database.Host", default: "localhost", formerNames: ["DatabaseHost"]),
    ])

    static let mainFile = plistDocument(
        """
            <!-- kept: a comment in the main file -->
            <key>Common</key>
            <dict>
                <key>ApiHost</key><string>api.other.example</string>
                <key>LogLevel</key><string>info</string>
            </dict>
            <key>Production</key>
            <dict/>
        """)

    static let dropIn = plistDocument(
        """
            <key>Production</key>
            <dict>
                <key>DatabaseHost</key><string>db.example</string>
            </dict>
            <key>Secrets</key><array><string>DatabaseHost</string></array>
        """)

    /// A configuration directory and a schema file beside it, removed afterwards.
    final class Files: TemporaryConfiguration {
        var dropIn: String { configDirectory + "/Environments.plist.d/60-db.plist" }
        var schema: String { root + "/schema.json" }

        init(main: String = EnvctlMigrateTests.mainFile, dropIn: String? = EnvctlMigrateTests.dropIn) throws {
            try super.init("migrate", plist: main, directories: ["etc/Environments.plist.d"])
            if let dropIn { try dropIn.write(toFile: self.dropIn, atomically: true, encoding: .utf8) }
            try EnvctlMigrateTests.declaration.jsonSchema(title: "migrate-tests").write(
                to: URL(fileURLWithPath: schema))
        }

        func contents() throws -> [Data] {
            try [mainFile, dropIn].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        }
    }

    static func envctl(_ arguments: [String]) throws -> FinishedProcess {
        try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment())
    }

    @Test("migrate renames former names in the main file and a drop-in, keeping comments, owner and mode")
    func migrate() throws {
        let files = try Files()
        chown(files.dropIn, 0, 65534)
        chmod(files.dropIn, 0o640)
        let before = try files.contents()
        let arguments = ["migrate", "--schema", files.schema, "--config-dir", files.configDirectory]

        let dry = try Self.envctl(arguments + ["--dry-run"])
        #expect(dry.status == 0, "\(dry.output)")
        #expect(
            dry.standardOutput == """
                \(files.mainFile):7: Common.ApiHost -> Common.APIHost
                \(files.dropIn):6: Production.DatabaseHost -> Production.Database.Host
                \(files.dropIn):8: Secrets: DatabaseHost -> Database.Host
                would migrate 3 former names in 2 files (checked for Production); nothing was written (--dry-run)

                """)
        #expect(try files.contents() == before)

        let migrated = try Self.envctl(arguments)
        #expect(migrated.status == 0, "\(migrated.output)")
        #expect(migrated.standardOutput.hasSuffix("migrated 3 former names in 2 files (checked for Production)\n"))
        // The main file's rename stays in its dictionary: edited in place, comments kept.
        let main = try String(contentsOfFile: files.mainFile, encoding: .utf8)
        #expect(main == Self.mainFile.replacingOccurrences(of: "<key>ApiHost</key>", with: "<key>APIHost</key>"))
        // The drop-in's moves a value into a dictionary: written anew, owner and mode kept.
        let root = try #require(
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: URL(fileURLWithPath: files.dropIn)), format: nil) as? [String: Any])
        let production = try #require(root["Production"] as? [String: Any])
        #expect((production["Database"] as? [String: Any])?["Host"] as? String == "db.example")
        #expect(production["DatabaseHost"] == nil)
        #expect(root["Secrets"] as? [String] == ["Database.Host"])
        var status = stat()
        #expect(stat(files.dropIn, &status) == 0)
        #expect(status.st_mode & 0o7777 == 0o640)
        #expect(status.st_uid == 0 && status.st_gid == 65534)

        // The values are what they were, the secret still secret, and no former name is left.
        let get = try Self.envctl([
            "get", "Database.Host", "--environment", "Production", "--config-dir", files.configDirectory,
        ])
        #expect(get.status == 1 && get.output.contains("is secret"), "\(get.output)")
        let strict = try Self.envctl([
            "check", "--strict", "--schema", files.schema, "--config-dir", files.configDirectory,
        ])
        #expect(strict.status == 0, "\(strict.output)")
        let again = try Self.envctl(arguments)
        #expect(again.status == 0, "\(again.output)")
        #expect(again.standardOutput.contains("nothing to migrate"), "\(again.output)")
    }

    @Test("a section with both the former name and the name now is a conflict naming both; nothing is written")
    func conflict() throws {
        let files = try Files(
            main: Self.mainFile.replacingOccurrences(
                of: "<key>LogLevel</key>",
                with: "<key>APIHost</key><string>api.example.com</string>\n        <key>LogLevel</key>"))
        let before = try files.contents()
        let result = try Self.envctl(["migrate", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains(
                "\(files.mainFile):7: Common.ApiHost is the former name of APIHost, and Common.APIHost is set too (line 8)"
            ),
            "\(result.output)")
        #expect(result.output.contains("nothing was written"), "\(result.output)")
        #expect(try files.contents() == before)
    }

    @Test("a former name that is ignored today (its name now is set in another file) is not brought in")
    func valueChange() throws {
        let files = try Files(
            main: Self.mainFile.replacingOccurrences(
                of: "<key>LogLevel</key>",
                with:
                    "<key>Database</key><dict><key>Host</key><string>db.main.example</string></dict>\n        <key>LogLevel</key>"
            ),
            dropIn: Self.dropIn.replacingOccurrences(of: "<key>Production</key>", with: "<key>Common</key>"))
        let before = try files.contents()
        let result = try Self.envctl(["migrate", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains("renaming would change values in effect (Production: Database.Host)"),
            "\(result.output)")
        #expect(try files.contents() == before)
    }

    @Test("without a declaration, migrate says where to get one")
    func noDeclaration() throws {
        let files = try Files()
        let result = try Self.envctl(["migrate", "--config-dir", files.configDirectory])
        #expect(result.status == 1)
        #expect(result.output.contains("no settings declaration to take the former names from"), "\(result.output)")
    }

    @Test(
        "schema and migrate with --app-name and no daemon read the installed /usr/share/NAME/schema.json",
        .enabled(if: geteuid() == 0, "writes to /usr/share"))
    func installedSchema() throws {
        let files = try Files()
        try withInstalledSchema(files.schema, namePrefix: "envctl-migrate") { name, directory in
            let installed = try String(contentsOfFile: directory + "/schema.json", encoding: .utf8)

            let schema = try runToEnd(
                BuiltProducts.envctl, ["schema", "--app-name", name], environment: operatorEnvironment(),
                separately: true)
            #expect(schema.status == 0, "\(schema.output)")
            #expect(schema.standardOutput == (installed.hasSuffix("\n") ? installed : installed + "\n"))
            #expect(
                schema.standardError
                    == "envctl: no running daemon of \(name): printing the schema its package installed, \(directory)/schema.json\n"
            )
            // Without it, the error says that neither is there.
            let none = try Self.envctl(["schema", "--app-name", name + "-none"])
            #expect(none.status == 1)
            #expect(
                none.output.contains("and no installed schema at /usr/share/\(name)-none/schema.json"), "\(none.output)"
            )

            let migrated = try Self.envctl(["migrate", "--app-name", name, "--config-dir", files.configDirectory])
            #expect(migrated.status == 0, "\(migrated.output)")
            #expect(migrated.standardOutput.contains("migrated 3 former names in 2 files"), "\(migrated.output)")
        }
    }

    @Test("migrate takes the running daemon's declaration, and its check")
    func fromDaemon() async throws {
        let fixture = try ControlSocketFixture()
        let original = ControlSocketFixture.plist("hello").replacingOccurrences(
            of: "<key>Greeting</key>", with: "<key>Salutation</key>")
        try fixture.write(original)
        var options = EnvironmentOptions(
            applicationName: "control-tests", environment: "Production", configDirectory: fixture.root + "/etc",
            processEnvironment: ["CREDENTIALS_DIRECTORY": fixture.root + "/credentials"])
        options.declaration = SettingsDeclaration([
            Setting<String>("Greeting", default: "hi", formerNames: ["Salutation"]),
            Setting<Int>("ListenPort", default: 8080),
            Setting<String?>("Database.Password", secret: true),
        ])
        let environment = try Environment(options: options)
        try await fixture.service(environment).whileRunning {
            let migrated = try await onThread { try Self.envctl(["migrate", "--socket", fixture.socket]) }
            #expect(migrated.status == 0, "\(migrated.output)")
            #expect(
                migrated.standardOutput == """
                    \(fixture.mainFile):4: Common.Salutation -> Common.Greeting
                    migrated 1 former name in 1 file (checked by the running daemon (environment Production))

                    """)
            #expect(
                try String(contentsOfFile: fixture.mainFile, encoding: .utf8)
                    == original.replacingOccurrences(of: "<key>Salutation</key>", with: "<key>Greeting</key>"))
        }
    }
}
