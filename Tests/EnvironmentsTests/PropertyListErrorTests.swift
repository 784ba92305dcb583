import Environments
import Foundation
import Testing

/// Every XML document the parser refuses is an error that names the file, the line where the
/// problem starts and what was found there; a value at fault also names its key. No Foundation
/// parser stands behind ours to explain it (issue 55).
@Suite struct PropertyListErrorTests {
    /// The document's lines: 1 the declaration, 2 `<plist>`, 3 `<dict>`, 4 `<key>Common</key>`,
    /// 5 `<dict>`, 6 the body's first line.
    private static func document(_ body: String, prolog: String = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        -> String
    {
        prolog + "\n<plist version=\"1.0\">\n<dict>\n<key>Common</key>\n<dict>\n" + body
            + "\n</dict>\n</dict>\n</plist>\n"
    }

    private static func error(_ text: String) throws -> EnvironmentError? {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: text)
            return #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
        }
    }

    @Test(arguments: [
        ("<key>A</key><strin>x</strin>", "unknown element <strin>", 6),
        ("<key>A</key>\n<string>x</strin>", "markup inside a <string>", 7),
        ("<key>A</key><integer>eighty</integer>", "the <integer> is not an integer", 6),
        ("<key>A</key><integer> 5 </integer>", "the <integer> is not an integer", 6),
        ("<key>A</key><integer></integer>", "an empty <integer>", 6),
        ("<key>A</key><real>1.5x</real>", "the <real> is not a real number", 6),
        ("\n\n<key>A</key><date>2020-13-01T00:00:00Z</date>", "is not a date (write yyyy-MM-ddTHH:mm:ssZ", 8),
        ("<key>A</key><date>2020-01-01</date>", "is not a date", 6),
        ("<key>A</key><data>AAA</data>", "not valid base64", 6),
        ("<key>A</key><true>yes</true>", "<true> holds something", 6),
        ("<key>A</key><string>a &nbsp; b</string>", "unknown entity '&nbsp;'", 6),
        ("<key>A</key><string>&#0;</string>", "a character reference to no character", 6),
        ("<key>A</key><string>&#xD800;</string>", "a character reference to no character", 6),
        ("<key>A</key>\n</dict>", "the key 'A' has no value", 7),
        ("<string>x</string>", "expected <key> or </dict>", 6),
        ("<key>A</key><string>x</string>\n<!-- never closed", "a comment that is never closed", 7),
        ("<key>A</key><key>B</key><string>x</string>", "the key 'A' has no value", 6),
    ])
    func aMalformedElementIsAnErrorWithItsLine(body: String, phrase: String, line: Int) throws {
        let error = try Self.error(Self.document(body))
        #expect(error?.code == .malformedFile)
        #expect(error?.line == line, "\(error as Any)")
        #expect(error?.description.contains(phrase) == true, "\(error as Any)")
        #expect(error?.description.contains("envctl check") == true, "\(error as Any)")
    }

    /// A value may be a secret: no error quotes one, only the markup around it.
    @Test(arguments: [
        "<key>Password</key><integer>hunter2</integer>", "<key>Password</key><real>hunter2</real>",
        "<key>Password</key><date>hunter2</date>", "<key>Password</key><data>hunter2</data>",
        "<key>Password</key>hunter2", "<key>Password</key><string>hunter2</strin>",
        "<key>Password</key><true>hunter2</true>",
    ])
    func noErrorQuotesAValue(body: String) throws {
        let error = try Self.error(Self.document(body))
        #expect(error?.code == .malformedFile)
        #expect(error?.description.contains("hunter2") == false, "\(error as Any)")
    }

    @Test func aValueAtFaultNamesItsKey() throws {
        let error = try Self.error(Self.document("<key>Limits</key><dict><key>Rate</key><real>fast</real></dict>"))
        #expect(error?.key == "Common.Limits.Rate", "\(error as Any)")
        #expect(error?.line == 6)
    }

    @Test(arguments: [
        (
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>",
            "only UTF-8 is read (convert it: iconv -f ISO-8859-1 -t UTF-8)"
        ),
        ("<?xml version=\"1.0\" encoding=\"UTF-8\"", "the XML declaration is never closed"),
        ("<!DOCTYPE plist [<!ENTITY x \"y\">]>", "internal subset"),
    ])
    func aPrologThatIsNotReadIsAnErrorOnItsLine(prolog: String, phrase: String) throws {
        let error = try Self.error(Self.document("<key>A</key><string>x</string>", prolog: prolog))
        #expect(error?.code == .malformedFile)
        #expect(error?.line == 1, "\(error as Any)")
        #expect(error?.description.contains(phrase) == true, "\(error as Any)")
    }

    @Test func utf16IsRefusedWithTheCommandThatConvertsIt() throws {
        try withTemporaryDirectory { directory in
            let text = Self.document("<key>A</key><string>x</string>").replacing("UTF-8", with: "UTF-16")
            try directory.write(
                "Environments.plist",
                data: Data([0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }))
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .malformedFile)
            #expect(error?.description.contains("iconv -f UTF-16 -t UTF-8") == true, "\(error as Any)")
        }
    }

    @Test func nestingDeeperThanTheLimitIsAnError() throws {
        let depth = 200
        let body =
            "<key>Deep</key>" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
        let error = try Self.error(Self.document(body))
        #expect(error?.code == .malformedFile)
        #expect(error?.description.contains("nested deeper than 128 levels") == true, "\(error as Any)")
    }

    /// What Foundation reads and the parser once left to it, read the same now.
    @Test func unusualFormsAreRead() throws {
        let text = Self.document(
            """
            <key>Hex</key><integer>-0x1F</integer><key>Up</key><real>+Infinity</real>
            <key>Flag</key><true></true><key>Tagged</key><string kind="x">y</string>
            """
        ).replacing("</dict>\n</dict>\n</plist>", with: "</dict>\n<key>Debug</key><dict/>\n</dict>\n</plist>")
        let environment = try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: text)
            return try Environment(options: directory.options())
        }
        #expect(environment.get("Hex", default: 0) == -31)
        #expect(environment.get("Up", default: 0.0) == .infinity)
        #expect(environment.get("Flag", default: false) == true)
        #expect(environment.get("Tagged", default: "") == "y")
    }
}
