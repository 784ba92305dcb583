import Foundation
import TestSupport
import Testing

/// What `envctl set` writes, every property-list reader reads (issue 44.6): keys and strings
/// with characters XML 1.0 does not allow (ESC and the other C0 controls, U+FFFE, U+FFFF), or a
/// carriage return that XML readers turn into a line feed, are refused before anything is
/// written; what is written parses in Python's `plistlib` (expat) as envctl reads it.
@Suite(.serialized, .blocking) struct EnvctlXMLCharacterTests {
    /// The drop-in's `Common` as Python's `plistlib` reads it, as JSON, or the error it raised.
    private func plistlibCommon(_ path: String) throws -> FinishedProcess {
        try runToEnd(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], 'rb'))['Common'], sort_keys=True))",
                path,
            ], separately: true)
    }

    @Test func whatSetWritesParsesInPlistlibAsWritten() throws {
        let directory = try ExampleConfigurationDirectory()
        let value = "Grüße\tan alle 🎉 \u{E000}\u{10FFFF} <&> \"'"
        let set = try runEnvctl(["set", "Straße.Σοφία", value, "--config-dir", directory.path])
        #expect(set.status == 0, "\(set.output)")
        let read = try plistlibCommon(directory.dropIn)
        #expect(read.status == 0, "\(read.output)")
        let common = try #require(
            try JSONSerialization.jsonObject(with: Data(read.standardOutput.utf8)) as? [String: Any])
        #expect((common["Straße"] as? [String: Any])?["Σοφία"] as? String == value)
        // envctl reads it back too (`get` escapes the tab).
        let get = try runEnvctl(["get", "Straße.Σοφία", "--environment", "Staging", "--config-dir", directory.path])
        #expect(get.status == 0, "\(get.output)")
        #expect(get.standardOutput == value.replacingOccurrences(of: "\t", with: "\\t") + "\n", "\(get.output)")
    }

    @Test(arguments: [
        (["Bad\u{1B}Key", "x"], "the key 'Bad\\u{1B}Key' holds U+001B (ESC)"),
        (["Tab.In\u{B}Key", "x"], "the key 'Tab.In\\u{B}Key' holds U+000B (vertical tab)"),
        (["Key", "a\u{1}b"], "the value for 'Key' holds U+0001 (a control character)"),
        (["Key", "line\u{C}feed"], "the value for 'Key' holds U+000C (form feed)"),
        (["Key", "a\rb"], "the value for 'Key' holds U+000D (carriage return)"),
        (["Key\u{FFFF}", "x"], "holds U+FFFF (a noncharacter)"),
        (["Key", "x\u{FFFE}"], "holds U+FFFE (a noncharacter)"),
    ])
    func aCharacterOtherReadersRefuseIsRefusedAndNothingIsWritten(_ arguments: [String], _ message: String) throws {
        let directory = try ExampleConfigurationDirectory()
        let before = try directory.contents()
        let set = try runEnvctl(["set"] + arguments + ["--config-dir", directory.path])
        #expect(set.status == 1, "\(set.output)")
        #expect(set.output.contains(message), "\(set.output)")
        #expect(set.output.contains("nothing was written"), "\(set.output)")
        #expect(try directory.contents() == before)
    }

    /// A drop-in that holds such a key already (written by an earlier envctl): another `set` is
    /// refused, naming it; `unset` of that key writes a drop-in every reader reads.
    @Test func aDropInThatHoldsOneAlreadyIsRepairedByUnset() throws {
        let directory = try ExampleConfigurationDirectory()
        let old = try PropertyListSerialization.data(
            fromPropertyList: ["Common": ["Bad\u{1B}": "x", "Good": "y"]], format: .xml, options: 0)
        try old.write(to: URL(fileURLWithPath: directory.dropIn))
        #expect(try plistlibCommon(directory.dropIn).status != 0)

        let set = try runEnvctl(["set", "Other", "z", "--config-dir", directory.path])
        #expect(set.status == 1, "\(set.output)")
        #expect(set.output.contains("the key 'Common.Bad\\u{1B}' holds U+001B (ESC)"), "\(set.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.dropIn)) == old)

        let unset = try runEnvctl(["unset", "Bad\u{1B}", "--config-dir", directory.path])
        #expect(unset.status == 0, "\(unset.output)")
        let read = try plistlibCommon(directory.dropIn)
        #expect(read.status == 0, "\(read.output)")
        #expect(read.standardOutput == "{\"Good\": \"y\"}\n", "\(read.output)")
    }
}
