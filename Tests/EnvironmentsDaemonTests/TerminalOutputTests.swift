import Foundation
import TestSupport
import Testing

/// Keys and values holding ESC, BEL, CR, LF and NUL (a binary property list may) reach no
/// terminal and no log raw: every text output of envctl and the daemon's standard error
/// escape them (`\u{1B}`, `\u{7}`, `\r`, `\n`, `\0`), so none can drive the terminal or forge a
/// line; `--json` carries them exactly, as JSON escapes.
@Suite("control characters in keys and values are escaped in every text output", .blocking)
struct TerminalOutputTests {
    static let evilKey = "Evil\u{1B}[2J\u{7}Key\r\n# environment Forged, generation 99"
    static let evilValue = "v\u{1B}]0;pwned\u{7}\r\n<0>forged\0end\u{9B}31m\u{202E}"
    static let escapedKey = #"Evil\u{1B}[2J\u{7}Key\r\n# environment Forged, generation 99"#
    static let escapedValue = #"v\u{1B}]0;pwned\u{7}\r\n<0>forged\0end\u{9B}31m\u{202E}"#

    /// A binary property list with the example's settings and the hostile ones.
    static func binaryPlist(logLevel: String = "info") throws -> Data {
        let root: [String: Any] = [
            "Common": [
                "APIHost": "api.example.com", "APIBaseUrl": "https://${APIHost}/v1", "LogLevel": logLevel,
                "ListenPort": 8080, "HeartbeatInterval": "100ms", evilKey: evilValue, "Bell\u{7}": "ring\u{7}",
            ] as [String: Any],
            "Staging": ["APIHost": "staging.example.com"],
            "Production": ["Bell\u{7}": "other\u{1B}[1m"],
        ]
        return try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
    }

    /// The bytes of `text` that are control characters other than the line feed, or DEL, C1
    /// controls, separators or bidirectional controls.
    static func rawControls(_ text: String) -> [UInt32] {
        text.unicodeScalars.map(\.value).filter {
            ($0 < 0x20 && $0 != 0x0A) || (0x7F...0x9F).contains($0) || [0x2028, 0x2029, 0x202E].contains($0)
        }
    }

    @Test("envctl show, get, diff and check on the files")
    func envctlOnFiles() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try Self.binaryPlist().write(to: daemon.mainFile)
        let files = ["--config-dir", daemon.configDirectory.path, "--environment", "Staging"]

        let shown = try daemon.envctl(["show"] + files)
        #expect(shown.status == 0, "\(shown.output)")
        #expect(Self.rawControls(shown.output).isEmpty, "\(shown.output)")
        let lines = shown.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        // Three header lines (where from, the environment, the files) and one line per setting:
        // no forged line.
        #expect(lines.count == 3 + 7, "\(shown.output)")
        #expect(lines.filter { $0.hasPrefix("# from the files in ") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("# environment") }.count == 1)
        #expect(lines.contains { $0.hasPrefix(Self.escapedKey) && $0.contains(" = \(Self.escapedValue)    # ") })
        #expect(lines.contains { $0.hasPrefix(#"Bell\u{7}"#) && $0.contains(#"= ring\u{7} "#) })

        // JSON carries the exact key and value.
        let json = try daemon.envctl(["show", "--json"] + files)
        #expect(Self.rawControls(json.output).isEmpty, "\(json.output)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let settings = try #require(object["settings"] as? [String: [String: Any]])
        #expect(settings[Self.evilKey]?["value"] as? String == Self.evilValue)

        let got = try daemon.envctl(["get", Self.evilKey] + files)
        #expect(got.status == 0, "\(got.output)")
        #expect(got.output == Self.escapedValue + "\n")

        let diff = try daemon.envctl(["diff", "Staging", "Production", "--config-dir", daemon.configDirectory.path])
        #expect(diff.status == 1, "\(diff.output)")  // differences
        #expect(Self.rawControls(diff.output).isEmpty, "\(diff.output)")
        #expect(diff.output.contains(#"+ Bell\u{7} = other\u{1B}[1m    # "#), "\(diff.output)")

        try Self.binaryPlist(logLevel: "loud\u{1B}[5m\r\n<0>forged").write(to: daemon.mainFile)
        let checked = try daemon.envctl(["check"] + files)
        #expect(checked.status == 1)
        #expect(Self.rawControls(checked.output).isEmpty, "\(checked.output)")
        #expect(checked.output.split(separator: "\n").count == 1, "\(checked.output)")
        #expect(checked.output.contains(#"'LogLevel' is 'loud\u{1B}[5m\r\n<0>forged'"#), "\(checked.output)")
    }

    @Test("the daemon's stderr and envctl show from the daemon")
    func daemonOutput() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try Self.binaryPlist().write(to: daemon.mainFile)
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })

        let shown = try daemon.envctl(["show", "--pid", String(daemon.pid)])
        #expect(shown.status == 0, "\(shown.output)")
        #expect(Self.rawControls(shown.output).isEmpty, "\(shown.output)")
        #expect(shown.output.contains(Self.escapedKey + " = " + Self.escapedValue), "\(shown.output)")
        let got = try daemon.envctl(["get", Self.evilKey, "--pid", String(daemon.pid)])
        #expect(got.output == Self.escapedValue + "\n")

        // A rejected reload whose error quotes the hostile value.
        var bad = try Self.binaryPlist(logLevel: "x\u{1B}[2J\n<0>forged\0emergency")
        try bad.write(to: daemon.mainFile)
        let reloaded = try daemon.envctl(["reload", "--pid", String(daemon.pid)])
        #expect(reloaded.status == 1)
        #expect(Self.rawControls(reloaded.output).isEmpty, "\(reloaded.output)")
        #expect(reloaded.output.contains(#"x\u{1B}[2J\n<0>forged\0emergency"#), "\(reloaded.output)")
        bad = try Self.binaryPlist()
        try bad.write(to: daemon.mainFile)
        #expect(try daemon.envctl(["reload", "--pid", String(daemon.pid)]).status == 0)

        // Standard error is a file here: one timestamped line per entry, nothing raw in it.
        #expect(daemon.waitForLog(Self.escapedKey))
        let log = daemon.log
        #expect(Self.rawControls(log).isEmpty, "\(log)")
        for line in log.split(separator: "\n") {
            #expect(line.prefixMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4} [a-z]+ /#) != nil, "\(line)")
        }
        #expect(log.contains(#"x\u{1B}[2J\n<0>forged\0emergency"#), "\(log)")
    }
}
