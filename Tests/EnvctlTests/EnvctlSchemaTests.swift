import Environments
import EnvironmentsControl
import Foundation
import JSONText
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// The declaration for operators without the application's code: the control socket's
/// `Schema`, `envctl schema`, `envctl check --schema FILE` and `envctl explain`, through the
/// built envctl.
@Suite("envctl schema, check --schema and explain", .serialized, .blocking)
struct EnvctlSchemaTests {
    /// The example daemon's settings as issue 33 declares them.
    static let declaration = SettingsDeclaration([
        Setting<Int>(
            "ListenPort", default: 8080, bounds: .range(1...65535), restartOnly: true,
            summary: "The TCP port the daemon listens on"),
        Setting<Duration>(
            "RequestTimeout", default: .seconds(5), bounds: .range(.milliseconds(1)...(.seconds(600))),
            summary: "How long a request may take"),
        Setting<Duration>("HeartbeatInterval", default: .seconds(1)),
        Setting<String>(
            "LogLevel", default: "info",
            bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical")),
        Setting<String>("APIHost", default: "api.example.com"),
        Setting<URL?>("APIBaseUrl", bounds: .schemes("http", "https"), summary: "The API's base URL"),
        Setting<String>("Database.Host", default: "localhost", formerNames: ["DatabaseHost"]),
        Setting<Int>("Database.Port", default: 5432, bounds: .range(1...65535)),
        Setting<String>("Database.Name", default: "app"),
        Setting<String?>(
            "Database.Password", required: .in("Production"), secret: true, summary: "The database password"),
    ])

    static let secret = "Schema-Secret-Staple-77"

    static func plist(
        listenPort: String = "<integer>9000</integer>", common: String = "", production: String? = nil,
        extra: String = ""
    ) -> String {
        plistDocument(
            """
                <key>Common</key>
                <dict>
                    <key>APIHost</key><string>api.example.com</string>
                    <key>APIBaseUrl</key><string>https://${APIHost}/v1</string>
                    <key>ListenPort</key>\(listenPort)
                    \(common)
                </dict>
                <key>Debug</key><dict/>
                <key>Production</key>
                <dict>
                    \(production ?? "<key>Database</key><dict><key>Password</key><string>\(secret)</string></dict>")
                </dict>
                \(extra)
            """)
    }

    /// A configuration directory and the schema file beside it, removed afterwards.
    final class Files: TemporaryConfiguration {
        var schema: String { root + "/schema.json" }

        init(plist: String = EnvctlSchemaTests.plist()) throws {
            try super.init("schema", plist: plist)
            try EnvctlSchemaTests.declaration.jsonSchema(title: "example-daemon").write(
                to: URL(fileURLWithPath: schema))
        }
    }

    static func envctl(_ arguments: [String]) throws -> FinishedProcess {
        try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment())
    }

    /// `envctl explain KEY` with the declaration and the files of `files`, in `environment` when
    /// one is given.
    static func explain(_ key: String, in files: Files, environment: String? = nil) throws -> FinishedProcess {
        try envctl(
            ["explain", key, "--schema", files.schema, "--config-dir", files.configDirectory]
                + (environment.map { ["--environment", $0] } ?? []))
    }

    @Test("check --schema passes good files in every environment, and says which declaration it used")
    func checkGood() throws {
        let files = try Files()
        let check = try Self.envctl(["check", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(check.status == 0, "\(check.standardOutput)")
        let lines = check.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "checking against the 10 settings declared in \(files.schema)")
        #expect(lines.contains { $0.hasPrefix("OK: environment Debug,") })
        #expect(lines.contains { $0.hasPrefix("OK: environment Production,") })
        #expect(!check.standardOutput.contains(Self.secret))
        // --strict has nothing to fail on.
        let strict = try Self.envctl([
            "check", "--strict", "--schema", files.schema, "--config-dir", files.configDirectory,
        ])
        #expect(strict.status == 0, "\(strict.standardOutput)")
    }

    @Test("check --schema fails each environment for what the daemon would reject: type, bounds, required")
    func checkBad() throws {
        let files = try Files(
            plist: Self.plist(
                common: """
                    <key>HeartbeatInterval</key><string>soon</string>
                    <key>Database</key><dict><key>Port</key><string>many</string></dict>
                    """, production: ""))
        let check = try Self.envctl(["check", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(check.status == 1)
        let output = check.standardOutput
        let debug = try #require(output.split(separator: "\n").first { $0.hasPrefix("FAILED: environment Debug:") })
        #expect(debug.contains("'HeartbeatInterval' is a string ('soon'), expected a duration"))
        #expect(debug.contains("'Database.Port' is a string ('many'), expected an integer"))
        #expect(!debug.contains("Database.Password"))
        let production = try #require(
            output.split(separator: "\n").first { $0.hasPrefix("FAILED: environment Production:") })
        #expect(production.contains("'Database.Password' is required in Production and has no value"))
        #expect(production.contains("HeartbeatInterval"))
        #expect(output.contains("envctl: 2 of 2 environments failed the check"))

        // Without the schema, nothing declares them: the same files pass.
        let plain = try Self.envctl(["check", "--config-dir", files.configDirectory])
        #expect(plain.status == 0, "\(plain.standardOutput)")

        // Out of range, not one of the allowed values, and a duration out of its bounds.
        try files.writeMainFile(
            Self.plist(
                listenPort: "<integer>70000</integer>",
                common: "<key>RequestTimeout</key><string>20min</string><key>LogLevel</key><string>loud</string>"))
        let range = try Self.envctl([
            "check", "--schema", files.schema, "--config-dir", files.configDirectory, "--environment", "Debug",
        ])
        #expect(range.status == 1)
        #expect(range.standardOutput.contains("'ListenPort' is out of range ('70000'), expected 1...65535"))
        #expect(range.standardOutput.contains("'RequestTimeout' is out of range ('20min')"))
        #expect(range.standardOutput.contains("'LogLevel' is not an allowed value ('loud')"))
    }

    @Test("check --schema warns of unknown keys and former names, with did-you-mean; --strict fails on them")
    func checkWarnings() throws {
        let files = try Files(
            plist: Self.plist(
                common:
                    "<key>RequestTimeout</key><string>250ms</string><key>ListenPrt</key><integer>1</integer><key>DatabaseHost</key><string>db</string>"
            ))
        let check = try Self.envctl(["check", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(check.status == 0, "\(check.standardOutput)")
        let warnings = check.standardOutput.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(warnings.contains { $0.contains("'ListenPrt'") && $0.contains("did you mean 'ListenPort'?") })
        #expect(warnings.contains { $0.contains("'DatabaseHost' is the former name of 'Database.Host'") })
        #expect(warnings.allSatisfy { $0.contains("Environments.plist") })
        let strict = try Self.envctl([
            "check", "--strict", "--schema", files.schema, "--config-dir", files.configDirectory,
        ])
        #expect(strict.status == 1)
        let explain = try Self.explain("Database.Host", in: files)
        #expect(explain.standardOutput.contains("value: db (environment "), "\(explain.standardOutput)")
        #expect(explain.standardOutput.contains("former names: DatabaseHost"))
    }

    @Test("a schema file that cannot be read, or --schema with a daemon, is an error that says why")
    func badSchema() throws {
        let files = try Files()
        try #"{"properties": {"ListenPort": {"type": "integer", "minimum": "one"}}}"#.write(
            toFile: files.schema, atomically: true, encoding: .utf8)
        let check = try Self.envctl(["check", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(check.status == 1)
        #expect(
            check.standardOutput
                == "envctl: \(files.schema): invalid settings schema at /properties/ListenPort: minimum is not a number\n"
        )
        let missing = try Self.envctl([
            "check", "--schema", files.root + "/none.json", "--config-dir", files.configDirectory,
        ])
        #expect(missing.status == 1)
        #expect(missing.standardOutput.hasPrefix("envctl: cannot read the schema file: \(files.root)/none.json"))
        // Read as configuration files are: a FIFO is refused without blocking, and past 16 MiB
        // nothing more is read.
        let fifo = files.root + "/schema.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let pipe = try Self.envctl(["check", "--schema", fifo, "--config-dir", files.configDirectory])
        #expect(pipe.status == 1)
        #expect(pipe.standardOutput.contains("\(fifo): is not a regular file: it is a FIFO (named pipe)"))
        let large = files.root + "/large.json"
        #expect(FileManager.default.createFile(atPath: large, contents: Data(count: (16 << 20) + 1)))
        let huge = try Self.envctl(["check", "--schema", large, "--config-dir", files.configDirectory])
        #expect(huge.status == 1)
        #expect(
            huge.standardOutput.contains("\(large): is larger than 16 MiB, which no configuration or schema file needs")
        )
        let daemon = try Self.envctl(["check", "--schema", files.schema, "--socket", files.root + "/socket"])
        #expect(daemon.status == 1)
        #expect(daemon.standardOutput.contains("--schema reads files"))
    }

    @Test("check's errors do not tell the reader to run the check being run")
    func checkWording() throws {
        let directory = NSTemporaryDirectory() + "envctl-words-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "<plist><dict>\n<key>Common</key>\n<strin>x</string>".write(
            toFile: directory + "/Environments.plist", atomically: true, encoding: .utf8)
        let broken = try Self.envctl(["check", "--config-dir", directory, "--environment", "Production"])
        #expect(broken.status == 1)
        #expect(broken.standardOutput.contains("Fix the file"), "\(broken.standardOutput)")
        #expect(!broken.standardOutput.contains("run `envctl check`"), "\(broken.standardOutput)")

    }

    @Test("set refuses a key the declaration does not cover (did you mean, nothing written) unless --allow-undeclared")
    func setUndeclared() throws {
        let files = try Files()
        let dropIn = files.configDirectory + "/Environments.plist.d/90-local.plist"
        let typo = try Self.envctl([
            "set", "ListenPrt", "9001", "--type", "integer", "--schema", files.schema, "--config-dir",
            files.configDirectory,
        ])
        #expect(typo.status == 1, "\(typo.standardOutput)")
        #expect(
            typo.standardOutput.contains(
                "'ListenPrt' is not a declared setting (declarations from \(files.schema)), so nothing would read it; did you mean 'ListenPort'? Nothing was written: set 'ListenPort' instead, or pass --allow-undeclared"
            ), "\(typo.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: dropIn))
        // Below a declared key: declared (a dictionary setting covers its members).
        let nested = try Self.envctl([
            "set", "Database.Pasword", "x", "--schema", files.schema, "--config-dir", files.configDirectory,
        ])
        #expect(nested.status == 1)
        #expect(nested.standardOutput.contains("did you mean 'Database.Password'?"), "\(nested.standardOutput)")

        let declared = try Self.envctl([
            "set", "ListenPort", "9001", "--type", "integer", "--schema", files.schema, "--config-dir",
            files.configDirectory,
        ])
        #expect(declared.status == 0, "\(declared.standardOutput)")
        let allowed = try Self.envctl([
            "set", "ListenPrt", "9001", "--type", "integer", "--schema", files.schema, "--config-dir",
            files.configDirectory, "--allow-undeclared",
        ])
        #expect(allowed.status == 0, "\(allowed.standardOutput)")
        #expect(try String(contentsOfFile: dropIn, encoding: .utf8).contains("<key>ListenPrt</key>"))
        // Without a declaration known (no --schema, none installed, no daemon), nothing to refuse.
        let unknown = try Self.envctl(["set", "Anything", "x", "--config-dir", files.configDirectory])
        #expect(unknown.status == 0, "\(unknown.standardOutput)")
    }

    @Test(
        "edit refuses a key the declaration does not cover, as set does, keeping the edited copy; check warns of it alike"
    )
    func editUndeclared() throws {
        let files = try Files()
        let dropIn = files.configDirectory + "/Environments.plist.d/90-local.plist"
        let edited = files.root + "/edited.plist"
        try plistDocument(
            """
                <key>Common</key>
                <dict><key>ListenPrt</key><integer>9001</integer></dict>
            """
        ).write(toFile: edited, atomically: true, encoding: .utf8)
        // The editor copies the prepared text in; no terminal to ask on, so the copy is kept.
        let environment = operatorEnvironment().merging(["VISUAL": "cp -- \(edited)"]) { _, new in new }
        let arguments = ["edit", "--schema", files.schema, "--config-dir", files.configDirectory]
        let typo = try runToEnd(BuiltProducts.envctl, arguments, environment: environment)
        #expect(typo.status == 1, "\(typo.standardOutput)")
        #expect(
            typo.standardOutput.contains(
                "'ListenPrt' (in Common) is not a declared setting (declarations from \(files.schema)), so nothing would read it; did you mean 'ListenPort'? Nothing was written: write 'ListenPort' instead, or pass --allow-undeclared to write it all the same"
            ), "\(typo.standardOutput)")
        #expect(typo.standardOutput.contains("your rejected version is kept in "), "\(typo.standardOutput)")
        #expect(!FileManager.default.fileExists(atPath: dropIn))
        if let kept = typo.standardOutput.components(separatedBy: "your rejected version is kept in ").dropFirst()
            .first?.components(separatedBy: " ").first
        {
            #expect(FileManager.default.contents(atPath: kept) == FileManager.default.contents(atPath: edited))
            try? FileManager.default.removeItem(atPath: (kept as NSString).deletingLastPathComponent)
        }

        let allowed = try runToEnd(BuiltProducts.envctl, arguments + ["--allow-undeclared"], environment: environment)
        #expect(allowed.status == 0, "\(allowed.standardOutput)")
        #expect(try String(contentsOfFile: dropIn, encoding: .utf8).contains("<key>ListenPrt</key>"))
        // envctl check names the same key with the same suggestion, as a warning.
        let check = try Self.envctl(["check", "--schema", files.schema, "--config-dir", files.configDirectory])
        #expect(check.standardOutput.contains("'ListenPrt'"), "\(check.standardOutput)")
        #expect(check.standardOutput.contains("is not a declared setting"), "\(check.standardOutput)")
        #expect(check.standardOutput.contains("did you mean 'ListenPort'?"), "\(check.standardOutput)")
        // Removing an undeclared key is never refused.
        try plistDocument("").write(toFile: edited, atomically: true, encoding: .utf8)
        let removed = try runToEnd(BuiltProducts.envctl, arguments, environment: environment)
        #expect(removed.status == 0, "\(removed.standardOutput)")
    }

    @Test("explain prints the declaration, the value in effect and its source, and whether it takes a restart")
    func explainFromFiles() throws {
        let files = try Files(
            plist: Self.plist(extra: "<key>RestartRequired</key><array><string>APIHost</string></array>"))
        let port = try Self.explain("ListenPort", in: files, environment: "Production")
        #expect(port.status == 0, "\(port.standardOutput)")
        #expect(
            port.standardOutput == """
                ListenPort: declared in \(files.schema)
                description: The TCP port the daemon listens on
                type: integer
                default: 8080
                bounds: range 1...65535
                required: no
                secret: no
                restart-only: yes
                value: 9000 (environment Production)
                from: \(files.configDirectory)/Environments.plist [Common]
                changing it: takes a restart (restart-only: a reload leaves the running value)

                """)

        let password = try Self.explain("Database.Password", in: files, environment: "Production")
        #expect(password.status == 0, "\(password.standardOutput)")
        #expect(!password.standardOutput.contains(Self.secret))
        #expect(password.standardOutput.contains("required: in Production\nsecret: yes\n"))
        #expect(password.standardOutput.contains("value: <redacted> (environment Production)"))
        #expect(password.standardOutput.contains("[Production]"))
        #expect(password.standardOutput.contains("changing it: a reload applies it"))

        // A default: from the defaults layer.
        let timeout = try Self.explain("HeartbeatInterval", in: files, environment: "Debug")
        #expect(timeout.status == 0, "\(timeout.standardOutput)")
        // Durations in the form the files use, defaults and bounds alike.
        #expect(timeout.standardOutput.contains("type: duration\ndefault: 1s\n"), "\(timeout.standardOutput)")
        let request = try Self.explain("RequestTimeout", in: files, environment: "Debug")
        #expect(
            request.standardOutput.contains("default: 5s\nbounds: range 1ms to 10min\n"), "\(request.standardOutput)")
        #expect(timeout.standardOutput.contains("from: defaults"))

        // Undeclared, but listed restart-only by the files.
        let host = try Self.explain("APIHost", in: files, environment: "Debug")
        #expect(host.status == 0, "\(host.standardOutput)")
        #expect(host.standardOutput.contains("changing it: takes a restart"))

        let unknown = try Self.explain("Nope", in: files)
        #expect(unknown.status == 1)
        #expect(unknown.standardOutput.contains("Nope: not a declared setting (declarations from \(files.schema))"))
        #expect(unknown.standardOutput.contains("envctl: 'Nope' is neither declared nor set"))
    }

    @Test("explain from files that fail the declaration prints the declaration and why no value is in effect")
    func explainBadFiles() throws {
        let files = try Files(plist: Self.plist(listenPort: "<integer>0</integer>"))
        let port = try Self.explain("ListenPort", in: files, environment: "Debug")
        #expect(port.status == 1)
        #expect(port.standardOutput.contains("bounds: range 1...65535"))
        #expect(port.standardOutput.contains("envctl: the files do not load, so no value is in effect:"))
        #expect(port.standardOutput.contains("'ListenPort' is out of range ('0'), expected 1...65535"))
    }

    @Test(
        "check --app-name reads the schema its package installs in /usr/share/NAME/",
        .enabled(if: geteuid() == 0, "writes to /usr/share"))
    func installedSchema() throws {
        let files = try Files(plist: Self.plist(listenPort: "<integer>0</integer>"))
        try withInstalledSchema(files.schema, namePrefix: "envctl-schema") { name, directory in
            let check = try Self.envctl([
                "check", "--app-name", name, "--config-dir", files.configDirectory, "--environment", "Debug",
            ])
            #expect(check.status == 1)
            #expect(
                check.standardOutput.contains("checking against the 10 settings declared in \(directory)/schema.json"))
            #expect(check.standardOutput.contains("'ListenPort' is out of range"))
        }
    }

    @Test("the control socket's Schema hands out the declaration; envctl schema and explain ask it")
    func fromDaemon() async throws {
        let fixture = try ControlSocketFixture()
        var options = EnvironmentOptions(
            applicationName: "control-tests", environment: "Production", configDirectory: fixture.root + "/etc",
            processEnvironment: ["CREDENTIALS_DIRECTORY": fixture.root + "/credentials"])
        let declaration = SettingsDeclaration([
            Setting<String>("Greeting", default: "hi", summary: "What it says"),
            Setting<Int>("ListenPort", default: 8080, bounds: .range(1...65535), restartOnly: true),
            Setting<String?>("Database.Password", required: .in("Production"), secret: true),
            Setting<String?>("Contact", summary: "Who to call"),
        ])
        options.declaration = declaration
        let environment = try Environment(options: options)
        try await fixture.service(environment).whileRunning {
            let reply = try await ControlSocketFixture.call(fixture.socket, .schema)
            let schema = try JSONValue.record(SchemaReply.self, from: reply.parameters)
            #expect(schema.declared)
            #expect(schema.schema == declaration.jsonSchemaText(title: "control-tests"))
            let read = try SettingsDeclaration(jsonSchema: Data(schema.schema.utf8))
            #expect(read.declaration(forKey: "ListenPort")?.isRestartOnly == true)
            #expect(read.declaration(forKey: "Database.Password")?.requirement == .in("Production"))
            let wrong = try await ControlSocketFixture.call(
                fixture.socket, .schema, ["x": .int(1)])
            #expect(wrong.error == "org.varlink.service.InvalidParameter")

            let printed = try await onThread { try Self.envctl(["schema", "--socket", fixture.socket]) }
            #expect(printed.status == 0, "\(printed.standardOutput)")
            #expect(printed.standardOutput == schema.schema + "\n")

            let explained = try await onThread {
                try Self.envctl(["explain", "ListenPort", "--socket", fixture.socket])
            }
            #expect(explained.status == 0, "\(explained.standardOutput)")
            #expect(explained.standardOutput.hasPrefix("ListenPort: declared in the running daemon\n"))
            #expect(explained.standardOutput.contains("bounds: range 1...65535\n"))
            #expect(explained.standardOutput.contains("value: 8080\nfrom: \(fixture.mainFile) [Common]\n"))
            #expect(explained.standardOutput.contains("changing it: takes a restart"))

            let secret = try await onThread {
                try Self.envctl(["explain", "Database.Password", "--socket", fixture.socket])
            }
            #expect(secret.status == 0, "\(secret.standardOutput)")
            #expect(secret.standardOutput.contains("value: <redacted>\n"))
            #expect(!secret.standardOutput.contains("hunter2"))

            // set refuses a key the daemon does not declare, with the suggestion, writing nothing.
            let typo = try await onThread { try Self.envctl(["set", "Greting", "typo", "--socket", fixture.socket]) }
            #expect(typo.status == 1, "\(typo.standardOutput)")
            #expect(
                typo.standardOutput.contains(
                    "'Greting' is not a declared setting (declarations from the running daemon), so nothing would read it; did you mean 'Greeting'? Nothing was written"
                ), "\(typo.standardOutput)")
            #expect(!FileManager.default.fileExists(atPath: fixture.root + "/etc/Environments.plist.d/90-local.plist"))

            let greeting = try await onThread { try Self.envctl(["explain", "Greeting", "--socket", fixture.socket]) }
            #expect(
                greeting.standardOutput.hasSuffix("changing it: a reload applies it\n"), "\(greeting.standardOutput)")

            // A restart-only change that a reload leaves waiting.
            try fixture.write(
                ControlSocketFixture.plist("hello").replacingOccurrences(
                    of: "<integer>8080</integer>", with: "<integer>9090</integer>"))
            let reload = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(reload.error == nil, "\(reload)")
            let waiting = try await onThread {
                try Self.envctl(["explain", "ListenPort", "--socket", fixture.socket])
            }
            #expect(waiting.standardOutput.contains("value: 8080\n"), "\(waiting.standardOutput)")
            #expect(
                waiting.standardOutput.contains(
                    "waiting for a restart: 9090 (from \(fixture.mainFile) [Common])\n"))

            let unset = try await onThread { try Self.envctl(["explain", "Contact", "--socket", fixture.socket]) }
            #expect(unset.status == 0, "\(unset.standardOutput)")
            #expect(unset.standardOutput.contains("default: none\n"))
            #expect(unset.standardOutput.contains("value: none (not set, and no default)\n"))
            let unknown = try await onThread { try Self.envctl(["explain", "Nope", "--socket", fixture.socket]) }
            #expect(unknown.status == 1)
            #expect(
                unknown.standardOutput.contains("Nope: not a declared setting (declarations from the running daemon)"))
            #expect(unknown.standardOutput.contains("envctl: 'Nope' is neither declared nor set"))
        }

        // A program that declares nothing: an empty schema, and declared false.
        let plain = try fixture.environment()
        try await fixture.service(plain).whileRunning {
            let reply = try await ControlSocketFixture.call(fixture.socket, .schema)
            let schema = try JSONValue.record(SchemaReply.self, from: reply.parameters)
            #expect(!schema.declared)
            #expect(try SettingsDeclaration(jsonSchema: Data(schema.schema.utf8)).settings.isEmpty)
            let printed = try await onThread { try Self.envctl(["schema", "--socket", fixture.socket]) }
            #expect(printed.status == 0)
            #expect(printed.standardOutput.contains("envctl: the daemon declares no settings"))
        }
    }
    @Test(
        "the shipped example configuration, each environment, validates against the example daemon's schema with Python's jsonschema"
    )
    func shippedConfigurationAgainstTheExampleSchema() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let printed = try runToEnd(BuiltProducts.exampleDaemon, ["--print-schema"])
        #expect(printed.status == 0)
        let declaration = try SettingsDeclaration(jsonSchema: Data(printed.output.utf8))
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "shipped-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let schema = work.appendingPathComponent("schema.json").path
        try Data(printed.output.utf8).write(to: URL(fileURLWithPath: schema))
        var documents: [String] = []
        for environment in ["Debug", "Release", "Staging", "Production"] {
            var options = EnvironmentOptions(
                applicationName: "example-daemon", environment: environment,
                configDirectory: root.appendingPathComponent("etc/example-daemon").path,
                processEnvironment: [
                    "CREDENTIALS_DIRECTORY": root.appendingPathComponent("etc/example-credentials").path
                ])
            options.declaration = declaration
            options.warningsAreErrors = true
            let snapshot = try Environment(options: options).snapshot
            let document = work.appendingPathComponent("\(environment).json").path
            try effectiveJSON(of: snapshot).write(to: URL(fileURLWithPath: document))
            documents.append(document)
        }
        let checked = try validateWithPythonJSONSchema(schema: schema, documents: documents)
        #expect(
            checked.status == 0, "python3 with jsonschema is needed (scripts/install-packages.sh): \(checked.output)")
        #expect(
            checked.output == "Debug.json: valid\nRelease.json: valid\nStaging.json: valid\nProduction.json: valid\n",
            "\(checked.output)")
    }
}
