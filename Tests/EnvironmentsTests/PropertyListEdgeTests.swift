import Environments
import Foundation
import Testing

/// What a property list may hold at the edges: integers beyond 64 bits, infinite and NaN reals,
/// and anything after the document. Integers that do not fit are refused with the key, file and
/// line; non-finite reals load; only whitespace and comments may follow `</plist>`.
@Suite struct PropertyListEdgeTests {
    /// An XML document whose `Common` holds `body`, one key per line from line 4.
    private static func document(_ body: String, after: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict><key>Debug</key><dict/><key>Common</key><dict>
        \(body)
        </dict></dict>
        </plist>
        """ + after
    }

    private static func load(_ text: String) throws(EnvironmentError) -> Environment {
        let directory = try? TemporaryDirectory()
        defer { directory?.remove() }
        guard let directory, (try? directory.write("Environments.plist", text: text)) != nil else {
            throw EnvironmentError(.fileUnreadable, "cannot write the test file")
        }
        return try Environment(options: directory.options())
    }

    @Test(arguments: ["18446744073709551615", "9223372036854775808"])
    func xmlIntegersBeyondSixtyFourBitsAreRefusedWithTheKey(_ number: String) throws {
        let text = Self.document("<key>Small</key><integer>1</integer>\n<key>Big</key><integer>\(number)</integer>")
        let error = #expect(throws: EnvironmentError.self) { try Self.load(text) }
        #expect(error?.code == .malformedFile)
        #expect(error?.key == "Common.Big", "\(error as Any)")
        #expect(error?.description.contains(number) == true, "\(error as Any)")
        #expect(error?.line == 5, "\(error as Any)")
        #expect(error?.file?.hasSuffix("/Environments.plist") == true)
    }

    /// Below `Int64.min` and above `UInt64.max`, Foundation's parser refuses the file itself,
    /// with the line.
    @Test(arguments: ["-9223372036854775809", "18446744073709551616", "-99999999999999999999999"])
    func xmlIntegersBeyondWhatFoundationReadsAreRefusedWithTheLine(_ number: String) throws {
        let text = Self.document("<key>Small</key><integer>1</integer>\n<key>Big</key><integer>\(number)</integer>")
        let error = #expect(throws: EnvironmentError.self) { try Self.load(text) }
        #expect(error?.code == .malformedFile)
        #expect(error?.line == 5, "\(error as Any)")
        #expect(error?.file?.hasSuffix("/Environments.plist") == true)
    }

    @Test func theLimitsOfSixtyFourBitsAreKeptExactly() throws {
        let environment = try Self.load(
            Self.document(
                "<key>Max</key><integer>9223372036854775807</integer><key>Min</key><integer>-9223372036854775808</integer>"
            ))
        #expect(environment.value(forKey: "Max") == .integer(Int.max))
        #expect(environment.value(forKey: "Min") == .integer(Int.min))
    }

    @Test func binaryIntegersBeyondSixtyFourBitsAreRefusedWithTheKey() throws {
        try withTemporaryDirectory { directory in
            let root: [String: Any] = [
                "Debug": [:] as [String: Any],
                "Common": ["Limits": ["Fine": 1, "List": [1, NSNumber(value: UInt64.max)]] as [String: Any]],
            ]
            try directory.write(
                "Environments.plist",
                data: PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0))
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.key == "Common.Limits.List[1]", "\(error as Any)")
            #expect(error?.description.contains("18446744073709551615") == true, "\(error as Any)")

            // The largest that fits is kept exactly, in binary too.
            let fits: [String: Any] = ["Debug": ["Max": Int.max, "Min": Int.min]]
            try directory.write(
                "Environments.plist",
                data: PropertyListSerialization.data(fromPropertyList: fits, format: .binary, options: 0))
            let environment = try Environment(options: directory.options())
            #expect(environment.value(forKey: "Max") == .integer(Int.max))
            #expect(environment.value(forKey: "Min") == .integer(Int.min))
        }
    }

    @Test func infiniteAndNaNRealsLoadAndTypedReadsDoNotCrash() throws {
        let environment = try Self.load(
            Self.document(
                "<key>Up</key><real>inf</real><key>Down</key><real>-infinity</real><key>Odd</key><real>nan</real><key>Huge</key><real>1e300</real>"
            ))
        #expect(environment.value(forKey: "Up") == .real(.infinity))
        #expect(environment.value(forKey: "Down") == .real(-.infinity))
        guard case .real(let odd)? = environment.value(forKey: "Odd") else {
            Issue.record("Odd is \(environment.value(forKey: "Odd") as Any)")
            return
        }
        #expect(odd.isNaN)
        // A duration cannot be infinite, NaN or beyond ±292 years: the default, not a trap.
        for key in ["Up", "Down", "Odd", "Huge"] {
            #expect(environment.get(key, default: Duration.seconds(7)) == .seconds(7), "\(key)")
            #expect(throws: EnvironmentError.self) { try environment.require(key, as: Duration.self) }
        }
        #expect(environment.get("Up", default: 3) == 3)
        #expect((try? environment.require("Odd", as: String.self)) == "nan")
    }

    @Test(arguments: [
        // The document's last line, 6, ends with </plist>.
        ("trailing text\n", "text follows the end of the property list", 6),
        ("\n\n<plist version=\"1.0\"><dict/></plist>\n", "a second property list follows the first", 8),
        ("\n<?xml version=\"1.0\"?><plist><dict/></plist>", "a second property list follows the first", 7),
        ("\n<<<<<<< HEAD\n", "text follows the end", 7),
        ("<?xml-stylesheet href=\"x\"?>", "text follows the end", 6),
        ("\n <!-- a comment -->\n<!-- unterminated comment", "text follows the end", 8),
    ])
    func anythingButWhitespaceAndCommentsAfterTheDocumentIsAnError(after: String, message: String, line: Int) {
        // Both parsers: the fast one (plain values) and Foundation's (an infinite real, which
        // the fast one leaves to it).
        for body in ["<key>A</key><string>a</string>", "<key>A</key><real>inf</real>"] {
            let error = #expect(throws: EnvironmentError.self) { try Self.load(Self.document(body, after: after)) }
            #expect(error?.code == .malformedFile)
            #expect(error?.description.contains(message) == true, "\(error as Any)")
            #expect(error?.line == line, "\(error as Any)")
        }
    }

    @Test func whitespaceAndCommentsAfterTheDocumentAreFine() throws {
        for body in ["<key>A</key><string>a</string>", "<key>A</key><real>inf</real>"] {
            let environment = try Self.load(Self.document(body, after: "\n\n<!-- generated -->\n  \t\n<!-- end -->"))
            #expect(environment.value(forKey: "A") != nil)
        }
    }

    @Test func aBareRootIsScannedToo() {
        let bare = "<dict><key>Debug</key><dict><key>A</key><real>nan</real></dict></dict>\nextra"
        let error = #expect(throws: EnvironmentError.self) { try Self.load(bare) }
        #expect(error?.line == 2, "\(error as Any)")
    }
}
