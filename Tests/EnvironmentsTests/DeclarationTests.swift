import Environments
import Foundation
import TestSupport
import Testing

/// The settings the tests declare, as a program would: once, as statics.
enum Declared {
    static var port: Setting<Int> {
        Setting<Int>(
            "ListenPort", default: 8080, bounds: .range(1...65535), restartOnly: true, summary: "The TCP port")
    }
    static var timeout: Setting<Duration> {
        Setting<Duration>(
            "RequestTimeout", default: .seconds(5), bounds: .range(.milliseconds(1)...(.seconds(600))))
    }
    static var level: Setting<String> {
        Setting<String>(
            "LogLevel", default: "info",
            bounds: .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"))
    }
    static var baseURL: Setting<URL?> {
        Setting<URL?>("APIBaseUrl", bounds: .schemes("http", "https"))
    }
    static var host: Setting<String> {
        Setting<String>("Database.Host", default: "localhost", bounds: .pattern("[a-z0-9.-]+"))
    }
    static var databasePort: Setting<Int> {
        Setting<Int>(
            "Database.Port", default: 5432, bounds: .range(1...65535), formerNames: ["DatabasePort"])
    }
    static var password: Setting<String?> {
        Setting<String?>("Database.Password", required: .in("Production"), secret: true)
    }
    static var pin: Setting<Int> {
        Setting<Int>("Pin", default: 0, secret: true)
    }
    static var upstreams: SettingDeclaration {
        SettingDeclaration("Upstreams", type: .map(.url))
    }
    static var tags: Setting<[String]> {
        Setting<[String]>("Tags", default: [], bounds: .pattern("[a-z]+"))
    }

    static var all: SettingsDeclaration {
        SettingsDeclaration([
            port, timeout, level, baseURL, host, databasePort, password, pin, upstreams, tags,
        ])
    }
}

@Suite struct DeclarationTests {
    /// Options for `directory` with the declaration.
    static func options(
        _ directory: TemporaryDirectory, environment: String? = nil, variables: [String: String] = [:]
    ) -> EnvironmentOptions {
        var options = directory.options(environment: environment, processEnvironment: variables)
        options.declaration = Declared.all
        return options
    }

    static let good = plistDocument(
        """
            <key>Common</key>
            <dict>
                <key>ListenPort</key><integer>9000</integer>
                <key>RequestTimeout</key><string>250ms</string>
                <key>Database</key>
                <dict>
                    <key>Host</key><string>db.example.com</string>
                </dict>
                <key>Upstreams</key>
                <dict>
                    <key>api.example.com</key><string>https://api.example.com</string>
                </dict>
            </dict>
            <key>Debug</key><dict/>
            <key>Production</key><dict/>
        """)

    @Test("typed reads come from the declaration; declared defaults join the defaults layer")
    func reads() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.good)
            let environment = try Environment(options: Self.options(directory))
            #expect(environment[Declared.port] == 9000)
            #expect(environment[Declared.timeout] == .milliseconds(250))
            #expect(environment[Declared.databasePort] == 5432)
            #expect(environment.fetch("Database.Port") as? Int == 5432)
            #expect(environment.configuredValue(forKey: "Database.Port")?.source.layer == .defaults)
            #expect(environment[Declared.password] == nil)
            #expect(environment[Declared.baseURL] == nil)
            #expect(environment.snapshot.warnings.isEmpty, "\(environment.snapshot.warnings)")
            // Declared secrets and restart-only settings join the lists.
            #expect(environment.snapshot.secretKeys.contains("Database.Password"))
            #expect(environment.snapshot.restartRequiredKeys.contains("ListenPort"))
            // An in-memory reader without the declaration falls back to the default.
            let memory = try Environment(values: ["ListenPort": "not a port"])
            #expect(memory[Declared.port] == 8080)
        }
    }

    @Test("a restart-only setting's new value is checked at the reload, not held until a restart it would fail")
    func restartOnlyValueIsCheckedAtTheReload() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.good)
            let environment = try Environment(options: Self.options(directory))
            try directory.write("Environments.plist", text: Self.good.replacingOccurrences(of: "9000", with: "9001"))
            _ = try environment.reload()
            #expect(environment.snapshot.pendingRestart["ListenPort"]?.value == .integer(9001))
            #expect(environment[Declared.port] == 9000)
            for wrong in ["<string>eighty</string>", "<integer>70000</integer>"] {
                try directory.write(
                    "Environments.plist",
                    text: Self.good.replacingOccurrences(of: "<integer>9000</integer>", with: wrong))
                let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
                #expect(error.code == .validationFailed)
                #expect(error.message.contains("'ListenPort'"), "\(error.message)")
                #expect(environment[Declared.port] == 9000)
                #expect(environment.snapshot.pendingRestart["ListenPort"]?.value == .integer(9001))
            }
        }
    }

    @Test("a secret URL with the wrong scheme: the error shows neither the value nor its scheme")
    func secretSchemeIsNotShown() throws {
        try withTemporaryDirectory { directory in
            _ = try directory.writeXML(["Common": ["Upstream": "hunter3:correct-horse@db.example"], "Debug": [:]])
            var options = directory.options(environment: "Debug")
            options.declaration = SettingsDeclaration([
                Setting<URL?>("Upstream", bounds: .schemes("https"), secret: true)
            ])
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(error.message.contains("'Upstream' is not a URL with the scheme https"), "\(error.message)")
            #expect(!"\(error)".contains("hunter3"), "\(error)")
            #expect(!"\(error)".contains("correct-horse"), "\(error)")
        }
    }

    @Test("every wrong type, out-of-bounds value and missing required setting in one error, with file and line")
    func allProblemsAtOnce() throws {
        try withTemporaryDirectory { directory in
            let file = try directory.write(
                "Environments.plist",
                text: plistDocument(
                    """
                        <key>Common</key>
                        <dict>
                            <key>ListenPort</key><integer>70000</integer>
                            <key>RequestTimeout</key><string>forever</string>
                            <key>APIBaseUrl</key><string>ftp://files.example.com</string>
                            <key>Database</key>
                            <dict>
                                <key>Host</key><string>Not A Host</string>
                            </dict>
                            <key>Pin</key><string>hunter2-secret</string>
                            <key>Tags</key><array><string>ok</string><string>NOT</string></array>
                        </dict>
                        <key>Production</key><dict/>
                    """))
            let error = try #require(throws: EnvironmentError.self) {
                try Environment(options: Self.options(directory, environment: "Production"))
            }
            #expect(error.code == .validationFailed)
            #expect(error.key == "ListenPort")
            #expect(error.file == file)
            #expect(error.line == 6)
            let message = error.message
            #expect(message.hasPrefix("7 settings do not match their declaration"), "\(message)")
            #expect(
                message.contains("\(file):6: 'ListenPort' is out of range ('70000'), expected 1...65535"), "\(message)")
            #expect(
                message.contains("\(file):7: 'RequestTimeout' is a string ('forever'), expected a duration"),
                "\(message)")
            #expect(
                message.contains(
                    "\(file):8: 'APIBaseUrl' is not a URL with the scheme http or https ('ftp://files.example.com', scheme 'ftp')"
                ), "\(message)")
            #expect(message.contains("\(file):11: 'Database.Host' does not match the pattern"), "\(message)")
            #expect(message.contains("'Database.Password' is required in Production and has no value"), "\(message)")
            #expect(message.contains("\(file):13: 'Pin' is a string, expected an integer"), "\(message)")
            #expect(!message.contains("hunter2"), "a secret value is never quoted: \(message)")
            #expect(message.contains("\(file):14: 'Tags' has element [1] that does not match"), "\(message)")
        }
    }

    @Test("required in one environment: missing there fails, elsewhere loads")
    func requiredPerEnvironment() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.good)
            let debug = try Environment(options: Self.options(directory, environment: "Debug"))
            #expect(debug[Declared.password] == nil)
            let error = try #require(throws: EnvironmentError.self) {
                try Environment(options: Self.options(directory, environment: "Production"))
            }
            #expect(error.code == .validationFailed)
            #expect(error.key == "Database.Password")
            #expect(error.environment == "Production")
            let production = try Environment(
                options: Self.options(
                    directory, environment: "Production", variables: ["APP_DATABASE__PASSWORD": "s3cret"]))
            #expect(production[Declared.password] == "s3cret")
            #expect(production.configuredValue(forKey: "Database.Password")?.isSecret == true)
        }
    }

    @Test("an undeclared key is a warning with its file, line and 'did you mean'; a map covers its free keys")
    func unknownKeys() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.good)
            let dropIn = try directory.write(
                "Environments.plist.d/50-local.plist",
                text: plistDocument(
                    """
                        <key>Common</key>
                        <dict>
                            <key>RequestTimout</key><string>1s</string>
                            <key>Database</key>
                            <dict>
                                <key>Hots</key><string>db2</string>
                            </dict>
                            <key>Upstreams</key>
                            <dict>
                                <key>other.example.com</key><string>https://other.example.com</string>
                            </dict>
                            <key>Unrelated</key><string>x</string>
                        </dict>
                    """))
            let environment = try Environment(options: Self.options(directory))
            let warnings = environment.snapshot.warnings
            #expect(warnings.count == 3, "\(warnings)")
            #expect(warnings.allSatisfy { $0.code == .unknownKey && $0.file == dropIn })
            let timeout = try #require(warnings.first { $0.key == "RequestTimout" })
            #expect(timeout.line == 6)
            #expect(timeout.message.contains("did you mean 'RequestTimeout'?"), "\(timeout)")
            // The hint follows the question as a sentence of its own ("?. Rename" was printed).
            #expect(
                "\(timeout)".hasSuffix("did you mean 'RequestTimeout'? Rename it to 'RequestTimeout'"), "\(timeout)")
            let host = try #require(warnings.first { $0.key == "Database.Hots" })
            #expect(host.line == 9)
            #expect(host.message.contains("did you mean 'Database.Host'?"), "\(host)")
            let unrelated = try #require(warnings.first { $0.key == "Unrelated" })
            #expect(!unrelated.message.contains("did you mean"), "\(unrelated)")
            // The value is still there for whoever reads it.
            #expect((try? environment.require("RequestTimout", as: String.self)) == "1s")
        }
    }

    @Test("a misspelt section in a drop-in: did you mean the environment")
    func misspeltSection() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.good)
            let dropIn = try directory.writeXML(
                ["Prodution": ["ListenPort": 1], "Comon": [:]], to: "Environments.plist.d/50-local.plist")
            let environment = try Environment(options: Self.options(directory))
            let warnings = environment.snapshot.warnings
            #expect(
                warnings.contains {
                    $0.key == "Prodution" && $0.message.contains("did you mean 'Production'?") && $0.file == dropIn
                }, "\(warnings)")
            #expect(
                warnings.contains { $0.key == "Comon" && $0.message.contains("did you mean 'Common'?") }, "\(warnings)")
        }
    }

    @Test("an APP_ variable that names no declared key is a warning with 'did you mean'")
    func unmatchedVariables() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.good)
            let environment = try Environment(
                options: Self.options(
                    directory,
                    variables: [
                        "APP_ListenPrt": "9100", "APP_LISTENPORT": "9200", "APP_Database__Prot": "1",
                        "APP_Upstreams__new": "https://new.example.com",
                    ]))
            // Matched ignoring case to the declared key, and typed by the declaration.
            #expect(environment[Declared.port] == 9200)
            let warnings = environment.snapshot.warnings
            #expect(warnings.count == 2, "\(warnings)")
            #expect(warnings.allSatisfy { $0.code == .unmatchedVariable })
            let port = try #require(warnings.first { $0.key == "ListenPrt" })
            #expect(port.message.contains("did you mean $APP_ListenPort ('ListenPort')?"), "\(port)")
            let database = try #require(warnings.first { $0.key == "Database.Prot" })
            #expect(database.message.contains("did you mean $APP_Database__Port ('Database.Port')?"), "\(database)")
        }
    }

    @Test("a former name is applied under the new key, with a warning naming it")
    func formerName() throws {
        try withTemporaryDirectory { directory in
            let file = try directory.writeXML(["Common": ["DatabasePort": 6000], "Debug": [:]])
            let environment = try Environment(options: Self.options(directory))
            #expect(environment[Declared.databasePort] == 6000)
            #expect(environment.fetch("DatabasePort") == nil)
            let warning = try #require(environment.snapshot.warnings.first)
            #expect(environment.snapshot.warnings.count == 1)
            #expect(warning.code == .formerName)
            #expect(warning.key == "DatabasePort")
            #expect(warning.file == file)
            #expect(warning.line != nil)
            #expect(warning.message.contains("former name of 'Database.Port'"), "\(warning)")

            // Both set: the new key wins.
            try directory.writeXML(["Common": ["DatabasePort": 6000, "Database": ["Port": 7000]], "Debug": [:]])
            try environment.reload()
            #expect(environment[Declared.databasePort] == 7000)
            #expect(environment.snapshot.warnings.first?.message.contains("is ignored") == true)

            // A former name's value is checked like the new key's.
            try directory.writeXML(["Common": ["DatabasePort": 0], "Debug": [:]])
            let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error.key == "Database.Port")
            #expect(error.file == file)
        }
    }

    @Test("strict: a warning fails the load")
    func strict() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["ListenPrt": 1], "Debug": [:]])
            var options = Self.options(directory)
            options.warningsAreErrors = true
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(error.code == .strictWarning)
            #expect(error.key == "ListenPrt")
            #expect(error.message.contains("did you mean 'ListenPort'?"), "\(error)")
        }
    }

    @Test("a reload with a bad value is rejected and the last good configuration stays")
    func reloadKeepsLastGood() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["RequestTimeout": "2s"], "Debug": [:]])
            let environment = try Environment(options: Self.options(directory))
            #expect(environment[Declared.timeout] == .seconds(2))
            let generation = environment.snapshot.generation
            try directory.writeXML(["Common": ["RequestTimeout": "20min"], "Debug": [:]])
            let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error.code == .validationFailed)
            #expect(error.message.contains("'RequestTimeout' is out of range"), "\(error)")
            #expect(environment[Declared.timeout] == .seconds(2))
            #expect(environment.snapshot.generation == generation)
        }
    }

    @Test("a program that declares nothing: no checks, no new warnings")
    func noDeclaration() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(
                ["Common": ["ListenPort": 70000, "RequestTimout": "1s"], "Prodution": [:], "Debug": [:]])
            let environment = try Environment(
                options: directory.options(processEnvironment: ["APP_ListenPrt": "1", "APP_DatabasePort": "2"]))
            #expect(environment.snapshot.warnings.isEmpty)
            #expect(environment.get("ListenPort", default: 0) == 70000)
            #expect((try? environment.require("ListenPrt", as: String.self)) == "1")
            #expect(environment.fetch("Database.Port") == nil)
            // A typed setting read without a declaration: its value, else its default.
            #expect(environment[Declared.port] == 70000)
            #expect(environment[Declared.databasePort] == 5432)
        }
    }

    @Test("a key declared twice fails every load, naming it")
    func declarationMistake() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": [:], "Debug": [:]])
            var options = directory.options()
            options.declaration = SettingsDeclaration([Declared.port, SettingDeclaration("ListenPort", type: .integer)])
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(error.message.contains("'ListenPort' is declared twice"), "\(error)")
        }
    }
}
