import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// envctl from an operator's shell, through the built envctl and example daemon: it works
/// without the daemon's secrets (systemd gives `$CREDENTIALS_DIRECTORY` to the daemon alone), a
/// credential it cannot read shows as `<credential NAME: not readable here>` and is never
/// printed, a running daemon's own check decides; and it says what it reads, never guessing
/// from its own name.
@Suite("envctl from an operator's shell", .blocking)
struct EnvctlOperatorTests {
    /// The credential's text: in no output but where `--show-secrets` asks a daemon for it.
    static let secret = "cred-Operator-Staple-42"
    static let placeholder = "<credential db-password: not readable here>"

    /// The example's shape with a credential, as `Database.Password` (listed secret), inside a
    /// URL, and through another key.
    static func plist() -> String {
        examplePlist(
            moreCommon: """
                <key>Database</key>
                <dict>
                    <key>Password</key><string>${credential:db-password}</string>
                    <key>URL</key><string>postgres://app:${credential:db-password}@localhost/app</string>
                </dict>
                <key>DSN</key><string>${Database.URL}</string>
                """,
            moreSections: "<key>Production</key><dict/>", secrets: ["Database.Password"])
    }

    /// A configuration directory and a credentials directory holding `db-password`, removed
    /// afterwards.
    final class Files: TemporaryConfiguration {
        var credentials: String { root + "/credentials" }

        init(plist: String = EnvctlOperatorTests.plist()) throws {
            try super.init("operator", plist: plist, directories: ["credentials"])
            try (EnvctlOperatorTests.secret + "\n").write(
                toFile: credentials + "/db-password", atomically: true, encoding: .utf8)
        }
    }

    /// Runs envctl as from a login shell (none of the variables systemd sets for a unit), with
    /// `extra` added; its standard output and standard error apart.
    static func envctl(_ arguments: [String], environment extra: [String: String] = [:]) throws -> FinishedProcess {
        try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment(extra), separately: true)
    }

    /// The line of `key` in a `show` table.
    static func row(_ key: String, in table: String) -> String? {
        table.split(separator: "\n").map(String.init).first { $0.hasPrefix(key + " ") }
    }

    @Test(
        "without $CREDENTIALS_DIRECTORY, show, get, diff, check, set and edit read the files; the credential is not readable here"
    )
    func filesWithoutTheCredential() throws {
        let files = try Files()
        let location = ["--config-dir", files.configDirectory]
        let staging = location + ["--environment", "Staging"]

        let shown = try Self.envctl(["show"] + staging)
        #expect(shown.status == 0, "\(shown)")
        for key in ["Database.Password", "Database.URL", "DSN"] {
            let row = Self.row(key, in: shown.standardOutput)
            #expect(row?.contains("= \(Self.placeholder)    # ") == true, "\(key): \(shown.standardOutput)")
        }
        #expect(
            shown.standardOutput.contains(
                "# not readable here: credential db-password ($CREDENTIALS_DIRECTORY is not set"),
            "\(shown.standardOutput)")
        #expect(Self.row("APIBaseUrl", in: shown.standardOutput)?.contains("https://staging.example.com/v1") == true)
        // Not the daemon's hint: the unit has LoadCredential= already.
        #expect(!(shown.standardOutput + shown.standardError).contains("Add LoadCredential"))

        // Revealing shows what there is: the text around the credential, never the credential.
        let revealed = try Self.envctl(["show", "--show-secrets"] + staging)
        #expect(revealed.status == 0, "\(revealed)")
        #expect(
            Self.row("Database.URL", in: revealed.standardOutput)?.contains(
                "= postgres://app:\(Self.placeholder)@localhost/app") == true, "\(revealed.standardOutput)")

        let json = try Self.envctl(["show", "--json"] + staging)
        #expect(json.status == 0, "\(json)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let password = try #require((object["settings"] as? [String: Any])?["Database.Password"] as? [String: Any])
        #expect(password["value"] as? String == Self.placeholder)
        #expect(password["secret"] as? Bool == true)

        // get prints no placeholder as if it were the value: nothing on stdout, why on stderr.
        for extra in [[], ["--show-secrets"]] {
            let got = try Self.envctl(["get", "Database.Password"] + staging + extra)
            #expect(got.status == 1, "\(got)")
            #expect(got.standardOutput.isEmpty, "\(got.standardOutput)")
            #expect(got.standardError.contains("credential db-password, which cannot be read here"), "\(got)")
            #expect(got.standardError.contains("--app-name"), "\(got.standardError)")
        }
        let host = try Self.envctl(["get", "APIHost"] + staging)
        #expect(host.standardOutput == "staging.example.com\n", "\(host)")

        let diff = try Self.envctl(["diff", "Staging", "Production"] + location)
        #expect(diff.status == 1, "\(diff)")
        #expect(diff.standardOutput.contains("- APIHost = staging.example.com"), "\(diff.standardOutput)")
        #expect(diff.standardError.isEmpty, "\(diff.standardError)")

        let check = try Self.envctl(["check"] + location)
        #expect(check.status == 0, "\(check)")
        #expect(check.standardOutput.contains("OK: environment Production"), "\(check.standardOutput)")
        #expect(check.standardOutput.contains("credential db-password not checked: not readable here"))

        let set = try Self.envctl(["set", "LogLevel", "debug"] + location)
        #expect(set.status == 0, "\(set)")
        #expect(set.standardOutput.contains("credential db-password not readable here, not checked"), "\(set)")

        let editor = files.root + "/editor.sh"
        try writeExecutableScript("#!/bin/sh\nsed -i 's/debug/notice/' \"$1\"\n", to: editor)
        let edited = try Self.envctl(["edit"] + location, environment: ["EDITOR": editor])
        #expect(edited.status == 0, "\(edited)")
        #expect(try Self.envctl(["get", "LogLevel"] + staging).standardOutput == "notice\n")

        let everything = [shown, revealed, json, diff, check, set, edited].map { $0.standardOutput + $0.standardError }
        #expect(!everything.joined().contains(Self.secret))

        // Positive control: with the credential at hand envctl reads it, as the daemon does.
        let credentials = ["CREDENTIALS_DIRECTORY": files.credentials]
        let withCredential = try Self.envctl(["show"] + staging, environment: credentials)
        #expect(Self.row("Database.Password", in: withCredential.standardOutput)?.contains("= <redacted>") == true)
        #expect(!withCredential.standardOutput.contains("not readable here"), "\(withCredential.standardOutput)")
        let secret = try Self.envctl(
            ["get", "Database.Password", "--show-secrets"] + staging, environment: credentials)
        #expect(secret.standardOutput == Self.secret + "\n", "\(secret)")
        // A credential missing where $CREDENTIALS_DIRECTORY says is the daemon's error, not a placeholder.
        let empty = files.root + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let missing = try Self.envctl(["check"] + staging, environment: ["CREDENTIALS_DIRECTORY": empty])
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.standardError.contains("db-password is missing or unreadable"), "\(missing.standardError)")
    }

    @Test("a running daemon holds the credential: set, diff --running and check work from a shell without it")
    func runningDaemonWithTheCredential() throws {
        let files = try Files()
        let daemon = try DaemonHarness(
            plist: Self.plist(), extraEnvironment: ["CREDENTIALS_DIRECTORY": files.credentials])
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let pid = String(daemon.pid)
        // The operator's shell: no credentials (empty is not set).
        let shell = ["CREDENTIALS_DIRECTORY": ""]

        let set = try daemon.envctl(["set", "LogLevel", "debug", "--pid", pid], extraEnvironment: shell)
        #expect(set.status == 0, "\(set.output)")
        #expect(set.output.contains("by the running daemon (environment Staging)"), "\(set.output)")
        // Staging is the daemon's to check; envctl checks Production, without the credential.
        #expect(
            set.output.contains("checked for Production (credential db-password not readable here, not checked)"),
            "\(set.output)")
        #expect(daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 2") } != nil)

        let diff = try daemon.envctl(["diff", "--running", "--pid", pid], extraEnvironment: shell)
        #expect(diff.status == 0, "\(diff.output)")
        #expect(diff.output.contains("# no differences"), "\(diff.output)")
        // As root the daemon reveals the credential; the files' side has none to compare with.
        let revealed = try daemon.envctl(
            ["diff", "--running", "--show-secrets", "--pid", pid], extraEnvironment: shell)
        #expect(revealed.status == 0, "\(revealed.output)")
        #expect(
            revealed.output.contains("# credential db-password not readable here, not compared"), "\(revealed.output)")

        let check = try daemon.envctl(["check", "--pid", pid], extraEnvironment: shell)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("OK: environment Staging"), "\(check.output)")

        // The daemon's declaration decides: the files alone accept this, the declaration does
        // not; envctl refuses it with the daemon's declaration in Production, the environment it
        // checks itself, before asking the daemon (issue 52.4).
        let refused = try daemon.envctl(
            ["set", "APIBaseUrl", "ftp://files.example.com", "--pid", pid], extraEnvironment: shell)
        #expect(refused.status == 1, "\(refused.output)")
        #expect(
            refused.output.contains("the running daemon rejects it")
                || refused.output.contains("is not a URL with the scheme http or https"), "\(refused.output)")
        #expect(refused.output.contains("nothing was written"), "\(refused.output)")

        for output in [set.output, diff.output, check.output, refused.output] {
            #expect(!output.contains(Self.secret), "\(output)")
        }
    }

    @Test("for the daemon's environment the daemon's check decides: a value from the daemon's own environment")
    func theDaemonDecidesForItsEnvironment() throws {
        // Staging takes a value from the daemon's environment (Environment= in its unit), which
        // an operator's shell does not have: envctl alone cannot build Staging, the daemon can.
        let plist = examplePlist().replacingOccurrences(
            of: "<key>APIHost</key><string>staging.example.com</string>",
            with:
                "<key>APIHost</key><string>staging.example.com</string><key>Region</key><string>${env:EXAMPLE_REGION}</string>"
        )
        let daemon = try DaemonHarness(plist: plist, extraEnvironment: ["EXAMPLE_REGION": "eu-west"])
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let set = try Self.envctl(["set", "LogLevel", "debug", "--pid", String(daemon.pid)])
        #expect(set.status == 0, "\(set)")
        #expect(set.standardOutput.contains("checked by the running daemon (environment Staging)"), "\(set)")
        #expect(daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 2") } != nil)
        // Without the daemon, envctl says what is missing, naming the environment and the variable.
        let alone = try Self.envctl(["set", "LogLevel", "notice", "--config-dir", daemon.configDirectory.path])
        #expect(alone.status == 1, "\(alone)")
        #expect(alone.standardError.contains("environment Staging"), "\(alone.standardError)")
        #expect(alone.standardError.contains("EXAMPLE_REGION is not set"), "\(alone.standardError)")
    }

    @Test("envctl says what it reads: no guess from its own name, the daemon or the files, a fallback to files")
    func saysWhatItReads() throws {
        let files = try Files()
        // Nothing named: an error that says what to pass, not /etc/envctl.
        for arguments in [["show"], ["show", "--environment", "Staging"], ["get", "APIHost"], ["check"]] {
            let result = try Self.envctl(arguments)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.standardError.contains("which configuration?"), "\(arguments): \(result.standardError)")
            for flag in ["--app-name NAME", "--config-dir DIR", "--pid PID"] {
                #expect(result.standardError.contains(flag), "\(arguments): \(result.standardError)")
            }
            #expect(!result.standardError.contains("/etc/envctl"), "\(result.standardError)")
        }

        // From files: the table's first line says which, and how the environment was chosen.
        let shown = try Self.envctl(["show", "--config-dir", files.configDirectory, "--environment", "Staging"])
        #expect(shown.status == 0, "\(shown)")
        #expect(
            shown.standardOutput.hasPrefix(
                "# from the files in \(files.configDirectory), environment Staging (--environment); not from a running daemon\n"
            ), "\(shown.standardOutput)")
        // --json stays one JSON object, and says it in a member of its own; nothing on stderr.
        let json = try Self.envctl([
            "show", "--json", "--config-dir", files.configDirectory, "--environment", "Staging",
        ])
        #expect(json.status == 0, "\(json)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let readFrom = (object["readFrom"] as? [String: Any])?["files"] as? [String: Any]
        #expect(readFrom?["directory"] as? String == files.configDirectory, "\(json.standardOutput)")
        #expect(readFrom?["environmentChosenBy"] as? String == "--environment", "\(json.standardOutput)")
        #expect(json.standardError.isEmpty, "\(json.standardError)")

        // In a unit (systemd sets $CONFIGURATION_DIRECTORY), that directory is the obvious one.
        let inUnit = try Self.envctl(
            ["show"], environment: ["CONFIGURATION_DIRECTORY": files.configDirectory, "APP_ENVIRONMENT": "Staging"])
        #expect(inUnit.status == 0, "\(inUnit)")
        #expect(
            inUnit.standardOutput.hasPrefix(
                "# from the files in \(files.configDirectory), environment Staging ($APP_ENVIRONMENT)"),
            "\(inUnit.standardOutput)")

        // --app-name with no daemon running: it says it fell back to the files, and where they are.
        let name = "envctl-test-\(UUID().uuidString.prefix(8).lowercased())"
        let fallback = try Self.envctl(
            ["show", "--app-name", name],
            environment: [
                "CONFIGURATION_DIRECTORY": files.configDirectory, "APP_ENVIRONMENT": "Staging",
                "XDG_RUNTIME_DIR": files.root,
            ])
        #expect(fallback.status == 0, "\(fallback)")
        #expect(
            fallback.standardError.contains(
                "no running daemon of \(name) (no socket at /")
                && fallback.standardError.contains(
                    "): reading the files in \(files.configDirectory) instead"),
            "\(fallback.standardError)")
        #expect(fallback.standardOutput.hasPrefix("# from the files in \(files.configDirectory)"))

        // From a daemon: which one.
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let socket = daemon.runtimeDirectory.appendingPathComponent("configuration.varlink").path
        for arguments in [["--pid", String(daemon.pid)], ["--socket", socket]] {
            let fromDaemon = try daemon.envctl(["show"] + arguments)
            #expect(fromDaemon.status == 0, "\(fromDaemon.output)")
            #expect(
                fromDaemon.output.hasPrefix("# from the running daemon, pid \(daemon.pid) (\(socket))\n"),
                "\(fromDaemon.output)")
            let json = try daemon.envctl(["show", "--json"] + arguments)
            let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
            let readFrom = (object?["readFrom"] as? [String: Any])?["daemon"] as? [String: Any]
            #expect(readFrom?["pid"] as? Int == Int(daemon.pid), "\(json.output)")
            #expect(readFrom?["socket"] as? String == socket, "\(json.output)")
        }
    }
}
