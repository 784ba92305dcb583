import Foundation
import TestSupport
import Testing

@testable import envctl

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl credential set` and `list` on real files, with the host's real `systemd-creds`
/// (its host key in a temporary file through `$SYSTEMD_CREDENTIAL_SECRET`, so that the
/// machine's `/var/lib/systemd/credential.secret` is neither made nor used). The unit side
/// (systemd decrypting it for the daemon) is the end-to-end suite's scenario 15.
@Suite("envctl credential", .blocking)
struct EnvctlCredentialTests {
    static let secret = "cred-Encrypt-Staple-77"
    static var hasSystemdCreds: Bool { Command.path(of: "systemd-creds") != nil }

    /// A configuration directory, a unit directory, a credential store and a host key, removed
    /// afterwards.
    final class Files: TemporaryConfiguration {
        var unitDirectory: String { root + "/units" }
        var credentialStore: String { root + "/credstore.encrypted" }
        var hostKey: String { root + "/credential.secret" }
        var encrypted: String { credentialStore + "/example-daemon.db-password" }
        var dropIn: String { unitDirectory + "/example-daemon.service.d/90-credential-db-password.conf" }

        init() throws {
            try super.init(
                "credential", plist: EnvctlOperatorTests.plist(), directories: ["etc/Environments.plist.d", "units"])
        }

        var location: [String] {
            [
                "--config-dir", configDirectory, "--unit", "example-daemon", "--unit-dir", unitDirectory,
                "--credstore", credentialStore,
            ]
        }
        var environment: [String: String] { ["SYSTEMD_CREDENTIAL_SECRET": hostKey] }

        func write(_ text: String, to name: String) throws -> String {
            let path = root + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    /// What envctl printed, and its exit status.
    struct Ran: CustomStringConvertible {
        var status: Int32
        var standardOutput: String
        var standardError: String
        var output: String { standardOutput + standardError }
        var description: String { "exit \(status): \(output)" }
    }

    static func envctl(_ arguments: [String], _ files: Files, input: Data? = nil) throws -> Ran {
        guard let input else {
            let ran = try runToEnd(
                BuiltProducts.envctl, arguments, environment: operatorEnvironment(files.environment), separately: true)
            return Ran(status: ran.status, standardOutput: ran.standardOutput, standardError: ran.standardError)
        }
        // Standard input from a pipe, as `printf %s "$secret" | envctl credential set NAME`.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
        process.arguments = arguments
        process.environment = operatorEnvironment(files.environment)
        let (stdin, stdout, stderr) = (Pipe(), Pipe(), Pipe())
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let error = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Ran(
            status: process.terminationStatus, standardOutput: String(decoding: output, as: UTF8.self),
            standardError: String(decoding: error, as: UTF8.self))
    }

    /// What `systemd-creds decrypt` gives back for the encrypted file, with the same host key.
    static func decrypt(_ files: Files, name: String = "db-password") throws -> String {
        let result = try runToEnd(
            Command.path(of: "systemd-creds")!, ["decrypt", "--name=\(name)", files.encrypted, "-"],
            environment: operatorEnvironment(files.environment), separately: true)
        #expect(result.status == 0, "\(result)")
        return result.standardOutput
    }

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        return stat(path, &status) == 0 ? status.st_mode & 0o7777 : 0
    }

    @Test(
        "set from a file: the encrypted file (0600 in a 0700 store) decrypts to the secret, the drop-in (0644) loads it; no output holds it",
        .enabled(if: hasSystemdCreds, "needs systemd-creds (systemd 250 or later)"))
    func setFromFile() throws {
        let files = try Files()
        let secretFile = try files.write(Self.secret + "\n", to: "secret")
        let result = try Self.envctl(
            ["credential", "set", "db-password", "--from-file", secretFile, "--with-key", "host"] + files.location,
            files)
        #expect(result.status == 0, "\(result)")
        #expect(!result.output.contains(Self.secret))
        #expect(result.standardOutput.contains(files.encrypted))
        #expect(result.standardError.contains("systemctl restart example-daemon.service"))
        #expect(try Self.decrypt(files) == Self.secret + "\n")
        let stored = try Data(contentsOf: URL(fileURLWithPath: files.encrypted))
        #expect(!String(decoding: stored, as: UTF8.self).contains(Self.secret))
        #expect(Self.mode(files.encrypted) == 0o600)
        #expect(Self.mode(files.credentialStore) == 0o700)
        #expect(Self.mode(files.dropIn) == 0o644)
        let unitText = try String(contentsOfFile: files.dropIn, encoding: .utf8)
        #expect(unitText.contains("[Service]\nLoadCredentialEncrypted=db-password:\(files.encrypted)\n"))
        #expect(!unitText.contains(Self.secret))
        // No lock or temporary file is left beside them.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: files.credentialStore) == ["example-daemon.db-password"]
        )
    }

    @Test(
        "set from standard input; a second set replaces the encrypted file and keeps the mode an operator gave it",
        .enabled(if: hasSystemdCreds, "needs systemd-creds (systemd 250 or later)"))
    func setFromStandardInputTwice() throws {
        let files = try Files()
        let arguments = ["credential", "set", "db-password", "--with-key", "host"] + files.location
        let first = try Self.envctl(arguments, files, input: Data(Self.secret.utf8))
        #expect(first.status == 0, "\(first)")
        #expect(try Self.decrypt(files) == Self.secret)
        chmod(files.encrypted, 0o400)
        let second = try Self.envctl(arguments, files, input: Data("rotated-\(Self.secret)".utf8))
        #expect(second.status == 0, "\(second)")
        #expect(!second.output.contains(Self.secret))
        #expect(try Self.decrypt(files) == "rotated-\(Self.secret)")
        #expect(Self.mode(files.encrypted) == 0o400)
    }

    @Test("an empty secret, a name systemd or a unit setting cannot hold, or no unit: an error, and nothing is written")
    func refusals() throws {
        let files = try Files()
        let empty = try files.write("\n", to: "empty")
        let cases: [([String], String)] = [
            (["credential", "set", "db-password", "--from-file", empty] + files.location, "the secret is empty"),
            (["credential", "set", "db:password", "--from-file", empty] + files.location, "is not a credential name"),
            (["credential", "set", "../x", "--from-file", empty] + files.location, "is not a credential name"),
            (
                ["credential", "set", "db-password", "--from-file", files.root + "/none"] + files.location,
                "cannot read"
            ),
            (["credential", "set", "db-password", "--from-file", empty], "pass --unit UNIT, or --app-name NAME"),
            (["credential", "set", "db-password", "--from-file", empty, "--unit", "../x"], "is not a unit name"),
        ]
        for (arguments, expected) in cases {
            let result = try Self.envctl(arguments, files)
            #expect(result.status == 1, "\(arguments): \(result)")
            #expect(result.standardError.contains(expected), "\(arguments): \(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: files.credentialStore))
        #expect(!FileManager.default.fileExists(atPath: files.dropIn))
    }

    @Test("list names each credential with the file, line and key of every reference, in every file and section")
    func listReferences() throws {
        let files = try Files()
        try plistDocument(
            """
                <key>Staging</key>
                <dict>
                    <key>Token</key><string>${credential:api-token}</string>
                    <key>Literal</key><string>$${credential:not-one}</string>
                </dict>
            """
        ).write(
            toFile: files.configDirectory + "/Environments.plist.d/60-token.plist", atomically: true, encoding: .utf8)
        let result = try Self.envctl(["credential", "list"] + files.location, files)
        // No systemd here to ask: nothing is known about the unit, which is no failure.
        #expect(result.status == 0, "\(result)")
        let main = files.configDirectory + "/Environments.plist"
        let text = try String(contentsOfFile: main, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let passwordLine = lines.firstIndex { $0.contains("<key>Password</key><string>${credential:db-password}") }! + 1
        let urlLine = lines.firstIndex { $0.contains("<key>URL</key>") }! + 1
        #expect(
            result.standardOutput.contains("used at \(main):\(passwordLine) (Common.Database.Password)"), "\(result)")
        #expect(result.standardOutput.contains("used at \(main):\(urlLine) (Common.Database.URL)"), "\(result)")
        #expect(
            result.standardOutput.contains(
                "used at \(files.configDirectory)/Environments.plist.d/60-token.plist:6 (Staging.Token)"),
            "\(result)")
        #expect(!result.standardOutput.contains("not-one"))

        let json = try Self.envctl(["credential", "list", "--json"] + files.location, files)
        #expect(json.status == 0, "\(json)")
        let report = try #require(
            JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let credentials = try #require(report["credentials"] as? [[String: Any]])
        #expect(credentials.map { $0["name"] as? String } == ["db-password", "api-token"])
        #expect(report["unit"] as? String == "example-daemon.service")
        #expect(report["unitUnknown"] is String)
        let references = try #require(credentials.first?["references"] as? [[String: Any]])
        #expect(references.map { $0["line"] as? Int } == [passwordLine, urlLine])
    }

    @Test("the unit's credential settings from systemctl cat: order, replacement, resets, globs, no data shown")
    func unitSettings() {
        let parsed = UnitCredentials.parse(
            """
            # /etc/systemd/system/example-daemon.service
            [Unit]
            LoadCredential=not-in-service:/x
            [Service]
            # /run/example-daemon holds the control socket (a comment, not a file's header)
            LoadCredential=db-password:/etc/credstore/example-daemon.db-password
            # /etc/credstore/old
            LoadCredential=old:/etc/credstore/old
            SetCredential=plain:s3cret-Staple-12
            SetCredentialEncrypted=encrypted: \\
                    Whxqht+dQJax1aZeCGLxmiAAAAABAAAADAAAABAAAAAC9s2FpNz9fb3LYT0AAAAARzoiEZcQ5gPAXU8 \\
                    ==
            ImportCredential=example-daemon.*

            # /etc/systemd/system/example-daemon.service.d/90-credential-db-password.conf
            # Written by envctl credential set
            [Service]
            LoadCredentialEncrypted=db-password:/etc/credstore.encrypted/example-daemon.db-password
            # /etc/systemd/system/example-daemon.service.d/95-reset.conf
            [Service]
            SetCredential=
            """)
        let dropIn = "/etc/systemd/system/example-daemon.service.d/90-credential-db-password.conf"
        #expect(
            parsed.settings(giving: "db-password")
                == [
                    .init(
                        setting: "LoadCredentialEncrypted", name: "db-password",
                        path: "/etc/credstore.encrypted/example-daemon.db-password", file: dropIn)
                ])
        #expect(
            parsed.settings(giving: "old")
                == [
                    .init(
                        setting: "LoadCredential", name: "old", path: "/etc/credstore/old",
                        file: "/etc/systemd/system/example-daemon.service")
                ])
        #expect(parsed.settings(giving: "example-daemon.key").map(\.setting) == ["ImportCredential"])
        // SetCredential= empty clears SetCredentialEncrypted= too; [Unit] is no setting.
        #expect(parsed.settings(giving: "plain").isEmpty)
        #expect(parsed.settings(giving: "encrypted").isEmpty)
        #expect(parsed.settings(giving: "not-in-service").isEmpty)
        #expect(parsed.names == ["old", "example-daemon.*", "db-password"])

        let withData = UnitCredentials.parse("# /u.service\n[Service]\nSetCredential=plain:s3cret-Staple-12\n")
        var report = CredentialReport(
            unit: "u.service",
            references: [CredentialReference(name: "plain", file: "/etc/x.plist", line: 3, key: "Common.Key")],
            unitCredentials: withData)
        #expect(report.credentials.first?.given == nil)  // no LoadState: systemd was not asked
        report = CredentialReport(
            unit: "u.service",
            references: [
                CredentialReference(name: "plain", file: "/etc/x.plist", line: 3, key: "Common.Key"),
                CredentialReference(name: "other", file: "/etc/x.plist", line: 4, key: "Common.Other"),
            ],
            unitCredentials: UnitCredentials(
                settings: withData.settings, activeState: "inactive", loadState: "loaded"))
        #expect(report.credentials.map(\.given) == [true, false])
        let lines = report.lines().joined(separator: "\n")
        #expect(lines.contains("given by SetCredential=plain:(data not shown) (/u.service)"), "\(lines)")
        #expect(lines.contains("envctl credential set other"), "\(lines)")
        #expect(!lines.contains("s3cret-Staple-12"))
    }

    @Test("references: $${ is a literal, names are listed once, in order")
    func referenceNames() {
        #expect(CredentialReferences.names(in: "a${credential:x}b${credential:y}${credential:x}") == ["x", "y"])
        #expect(CredentialReferences.names(in: "$${credential:x}") == [])
        #expect(CredentialReferences.names(in: "${env:HOME}/${Key}") == [])
    }
}
