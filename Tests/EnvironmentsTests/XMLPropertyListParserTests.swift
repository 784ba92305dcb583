import Foundation
import TestSupport
import Testing

@testable import Environments

/// The fast XML parser against Foundation: whenever it returns a value, that value must equal
/// what `PropertyListSerialization` and `SettingValue(propertyList:)` make of the same bytes; it
/// must return one for the plists people and Foundation write; and it must return `nil` for
/// malformed input, so that Foundation reports the error.
@Suite(.blocking) struct XMLPropertyListParserTests {
    private static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    private static func document(_ body: String) -> Data {
        Data((header + body + "\n</plist>\n").utf8)
    }

    /// What Foundation makes of `data`, or `nil` if it rejects it.
    ///
    /// Foundation is given the document as ``PropertyListDocument`` gives it: every copy of a key
    /// written in several Unicode forms spelled as the last copy (Foundation compares keys code
    /// unit by code unit, and of two such keys keeps one by its own rules).
    private static func foundation(_ data: Data) -> SettingValue? {
        let scan = XMLPropertyListParser.scan(data)
        let prepared =
            XMLPropertyListParser.preparedForFoundation(data, emptyData: [], keyRewrites: scan.keyRewrites) ?? data
        guard let object = try? PropertyListSerialization.propertyList(from: prepared, options: [], format: nil) else {
            return nil
        }
        return SettingValue(foundationObject: object)
    }

    /// Parses `data` and checks that the result, if any, equals Foundation's.
    @discardableResult
    private static func agree(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) -> SettingValue? {
        let fast = XMLPropertyListParser.parse(data)
        if let fast {
            let expected = foundation(data)
            #expect(expected != nil, "Foundation rejects what the parser accepts", sourceLocation: sourceLocation)
            #expect(fast == expected || Self.bothNaN(fast, expected), sourceLocation: sourceLocation)
        }
        return fast
    }

    /// Whether both are `nan` (`<real>nan</real>`), which is not equal to itself.
    private static func bothNaN(_ one: SettingValue, _ other: SettingValue?) -> Bool {
        guard case .real(let a) = one, case .real(let b)? = other else { return false }
        return a.isNaN && b.isNaN
    }

    /// Checks that the parser returns a value for `data`, equal to Foundation's.
    private static func accepts(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        let fast = agree(data, sourceLocation: sourceLocation)
        #expect(fast != nil, "\(String(decoding: data, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    // MARK: - Accepted

    @Test(arguments: [
        "<string>hello</string>",
        "<string></string>",
        "<string/>",
        "<string>   </string>",
        "<string>\n\t leading and trailing \n</string>",
        "<string>line one\r\nline two\rthree</string>",
        "<string>café, naïve, 😀, 漢字, עברית</string>",
        "<string>&amp;&lt;&gt;&quot;&apos;</string>",
        "<string>a &amp;&amp; b &lt; c</string>",
        "<string>&#65;&#233;&#x1F600;&#x4e2d;&#xE9;</string>",
        "<string>x<![CDATA[<not> & a tag]]>y</string>",
        "<string><![CDATA[]]></string>",
        "<string>a > b ]]> c</string>",
        "<string>tab\tseparated</string>",
        "<string>raw \u{0}NUL, \u{7F}DEL, \u{FEFF}BOM, \u{2028}separator</string>",
        "<dict><key>a&amp;b<![CDATA[<c>]]></key><string>keys decode too</string></dict>",
        "<integer>0</integer>",
        "<integer>1</integer>",
        "<integer>-1</integer>",
        "<integer>+42</integer>",
        "<integer>007</integer>",
        "<integer>-0</integer>",
        "<integer>9223372036854775807</integer>",
        "<integer>-9223372036854775808</integer>",
        "<real>0</real>",
        "<real>1</real>",
        "<real>3.25</real>",
        "<real>-0.5</real>",
        "<real>.5</real>",
        "<real>5.</real>",
        "<real>1.5e3</real>",
        "<real>1.5E-3</real>",
        "<real>-2e+10</real>",
        "<real>0.1</real>",
        "<real>1.7976931348623157e308</real>",
        "<real>5e-324</real>",
        "<true/>",
        "<false/>",
        "<date>2024-02-29T12:34:56Z</date>",
        "<date>1970-01-01T00:00:00Z</date>",
        "<date>2001-01-01T00:00:00Z</date>",
        "<date>1900-03-01T23:59:59Z</date>",
        "<date>0001-01-01T00:00:00Z</date>",
        "<date>9999-12-31T23:59:59Z</date>",
        "<data>aGVsbG8=</data>",
        "<data>aGVsbG8gd29y\n\tbGQ=\n</data>",
        "<data></data>",
        "<data>   \n  </data>",
        "<array/>",
        "<array></array>",
        "<array><string>a</string><integer>1</integer><true/></array>",
        "<dict/>",
        "<dict></dict>",
        "<dict><key/><string/></dict>",
        "<dict><key>a</key><string>first</string><key>a</key><string>last</string></dict>",
        "<dict><key>k &amp; l</key><dict><key>nested</key><array><dict/><array/></array></dict></dict>",
        "<dict><key>é</key><string>CJK 中文</string><key>😀</key><integer>1</integer></dict>",
        """
        <!-- before -->
        <dict>
            <!-- first -->
            <key>a</key>
            <!-- between key and value -->
            <string>b</string>
            <!-- a comment -- with dashes -->
            <key>c</key><array><!-- in an array --><integer>1</integer><!-- end --></array>
        </dict>
        <!-- after -->
        """,
    ])
    func acceptsAndAgrees(body: String) {
        Self.accepts(Self.document(body))
    }

    @Test(arguments: [
        // No declaration, no DOCTYPE, no wrapper, BOM, lower-case encoding, comments around.
        "<plist version=\"1.0\"><dict><key>a</key><string>b</string></dict></plist>",
        "<dict><key>a</key><string>b</string></dict>",
        "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict/></plist>",
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<plist version=\"1.0\"><dict/></plist>",
        "<?xml version='1.0' encoding='UTF-8' standalone='yes'?><plist><dict/></plist>",
        "<?xml version=\"1.0\"?><plist><dict/></plist>",
        "<!-- c --><?xml version=\"1.0\"?>\n<!-- d --><plist version=\"1.0\"><dict/></plist>\n<!-- e -->\n",
        "  \n<?xml version=\"1.0\"?><plist><dict/></plist>",
        "<plist version=\"1.0\">\n<!-- x --><dict/><!-- y -->\n</plist>",
    ])
    func acceptsDocumentForms(text: String) {
        Self.accepts(Data(text.utf8))
    }

    @Test func acceptsWhatFoundationWrites() throws {
        var generator = Generator(seed: 42)
        var root: [String: Any] = [:]
        for index in 0..<2_000 {
            root["Setting\(index)"] = generator.value(depth: 0)
        }
        let data = try PropertyListSerialization.data(fromPropertyList: root, format: .xml, options: 0)
        Self.accepts(data)
        // Also the binary form must be left to Foundation.
        let binary = try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
        #expect(XMLPropertyListParser.parse(binary) == nil)
    }

    @Test func acceptsTheRepositorysFiles() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let etc = repository.appendingPathComponent("etc")
        let enumerator = try #require(FileManager.default.enumerator(at: etc, includingPropertiesForKeys: nil))
        var files: [URL] = []
        for case let url as URL in enumerator where url.pathExtension == "plist" { files.append(url) }
        #expect(files.count >= 2)
        for file in files {
            let data = try Data(contentsOf: file)
            let fast = Self.agree(data)
            #expect(fast != nil, "\(file.path)")
            if case .dictionary(let root)? = fast { #expect(!root.isEmpty) }
        }
    }

    @Test func datesAgreeWithFoundation() {
        var generator = Generator(seed: 7)
        var dates = ["1582-10-04T00:00:00Z", "1582-10-15T00:00:00Z", "1600-02-29T00:00:00Z", "2000-02-29T23:59:59Z"]
        for _ in 0..<300 {
            let year = generator.next(upTo: 9_999) + 1
            let month = generator.next(upTo: 12) + 1
            let day = generator.next(upTo: 28) + 1
            dates.append(
                String(
                    format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, generator.next(upTo: 24),
                    generator.next(upTo: 60), generator.next(upTo: 60)))
        }
        for date in dates {
            Self.accepts(Self.document("<date>\(date)</date>"))
        }
    }

    @Test func numbersAgreeWithFoundation() {
        var generator = Generator(seed: 3)
        for _ in 0..<300 {
            let integer = Int(truncatingIfNeeded: generator.nextRaw()) >> generator.next(upTo: 63)
            Self.accepts(Self.document("<integer>\(integer)</integer>"))
            let real = Double(bitPattern: generator.nextRaw())
            if real.isFinite {
                Self.accepts(Self.document("<real>\(real)</real>"))
            }
            let scaled = Double(integer) / 1_000
            Self.accepts(Self.document("<real>\(scaled)</real>"))
        }
    }

    /// Unusual forms: the parser may leave them to Foundation, but if it answers it must agree.
    @Test(arguments: [
        "<integer>0x1F</integer>",
        "<integer>9223372036854775808</integer>",
        "<integer>-9223372036854775809</integer>",
        "<integer>18446744073709551615</integer>",
        "<real>1e400</real>",
        "<real>1e-400</real>",
        "<real>nan</real>",
        "<real>+infinity</real>",
        "<real>-infinity</real>",
        "<date>2024-02-30T12:34:56Z</date>",
        "<date>2024-02-29T12:34:56.5Z</date>",
        "<data>aGVsbG8</data>",
        "<data>aGV!sbG8=</data>",
        "<data>aGVsbG9=</data>",
        "<data>aGVsbG8=aGVsbG8=</data>",
        "<true></true>",
        "<true />",
        "<dict ><key >a</key ><string>b</string></dict >",
        "<dict><key>a</key\n><string>b</string\t></dict>",
        "<array><integer>1</integer ><real>2</real ><date>2024-02-29T12:34:56Z</date ><data>AAE=</data ></array >",
        "<string attribute=\"x\">y</string>",
        "<string>&#0;</string>",
        "<string>\u{01}\u{1F}</string>",
        "<key>as a value</key>",
        "<dict><key>a</key><key>b</key></dict>",
        "<dict><key>e\u{301}</key><string>1</string><key>\u{E9}</key><string>2</string></dict>",
        "<dict><key>\u{E9}</key><string>1</string><key>e\u{301}</key><string>2</string><key>\u{E9}</key><string>3</string></dict>",
    ])
    func unusualFormsAgreeIfAccepted(body: String) {
        Self.agree(Self.document(body))
    }

    @Test func negativeZeroKeepsItsSign() throws {
        let value = try #require(XMLPropertyListParser.parse(Self.document("<real>-0.0</real>")))
        let expected = try #require(Self.foundation(Self.document("<real>-0.0</real>")))
        guard case .real(let fast) = value, case .real(let slow) = expected else {
            Issue.record("not reals: \(value), \(expected)")
            return
        }
        #expect(fast.sign == .minus)
        #expect(fast.sign == slow.sign)
    }

    @Test func leavesVeryDeepNestingToFoundation() {
        let depth = 1_000
        let body = String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
        #expect(XMLPropertyListParser.parse(Self.document(body)) == nil)
        let shallow = String(repeating: "<array>", count: 50) + String(repeating: "</array>", count: 50)
        Self.accepts(Self.document(shallow))
    }

    // MARK: - Found by Fuzz/plist

    /// Documents Foundation reads differently from what a tokenizer that knows XML would: the
    /// parser once accepted them with another value (or where Foundation fails), and must now
    /// leave them to Foundation.
    @Test(arguments: [
        // Foundation ends markup at the first `>` even inside quotes, and rejects a `[` anywhere
        // in a document type.
        "<!DOCTYPE plist PUBLIC \"-/[Apple//DTD PLIST 1.0//EN\" \"x\"><plist version=\"1.0\"><dict/></plist>",
        "<!DOCTYPE plist 'a[b'><plist version=\"1.0\"><dict/></plist>",
        "<!DOCTYPE plist \"a>b\"><plist version=\"1.0\"><dict/></plist>",
        "<plist version=\"1>0\"><dict/></plist>",
        "<plist version=\"1.0/>\"><dict/></plist>",
        // `=` inside base64's last group decodes differently in Foundation's parser.
        "<plist><data>aGVsbG=8</data></plist>",
        "<plist><data>aGVsbA=a</data></plist>",
        "<plist><data>aGVs====</data></plist>",
        "<plist><data>====</data></plist>",
        // Before the root, Foundation rejects an empty comment (it accepts it anywhere else).
        "<!----><true/>",
        "\u{FEFF}<!----><true/>",
        "<?xml version=\"1.0\"?><!----><plist><true/></plist>",
    ])
    func leavesFormsFoundationReadsDifferentlyToIt(text: String) {
        let data = Data(text.utf8)
        #expect(XMLPropertyListParser.parse(data) == nil)
        Self.agree(data)
    }

    /// Foundation drops one U+FEFF from the start of every string and key, however written; so
    /// does the parser.
    @Test(arguments: [
        "<plist><string>\u{FEFF}x</string></plist>",
        "<plist><string>\u{FEFF}\u{FEFF}x</string></plist>",
        "<plist><string>&#xFEFF;x</string></plist>",
        "<plist><string><![CDATA[\u{FEFF}x]]></string></plist>",
        "<plist><string>\u{FEFF}</string></plist>",
        "<plist><dict><key>\u{FEFF}Database</key><string>x</string></dict></plist>",
        "<?xml-stylesheet href=\"x\"?><plist version=\"1.0\"><dict/></plist>",
    ])
    func readsWhatFoundationReadsAtTheStartOfText(text: String) {
        Self.accepts(Data(text.utf8))
    }

    @Test func acceptsEmptyCommentsAfterTheRootBegins() {
        Self.accepts(Data("<!-- x --><plist><!----><dict/></plist>".utf8))
        Self.accepts(Data("<plist><dict><!----></dict></plist>".utf8))
        Self.accepts(Data("<plist><dict/><!----></plist>".utf8))
        Self.accepts(Data("<plist><dict/></plist><!---->".utf8))
        Self.accepts(Data("<!-----><true/>".utf8))
    }

    @Test func keepsAByteOrderMarkInsideStrings() {
        Self.accepts(Self.document("<string>a\u{FEFF}b</string>"))
        Self.accepts(Self.document("<string>&amp;\u{FEFF}</string>"))
        Self.accepts(Self.document("<data>aGVsbA==</data>"))
    }

    // MARK: - Rejected

    @Test(arguments: [
        "<dict><key>a</key><string>b</string>",
        "<dict><key>a</key><string>b</dict>",
        "<dict><key>a</key><string>b</strin></dict>",
        "<dict><key>a</key></dict>",
        "<dict><key>a</key>junk<string>b</string></dict>",
        "<dict><string>b</string></dict>",
        "<array><key>a</key></array>",
        "<dict/><dict/>",
        "",
        "<string>a & b</string>",
        "<string>&unknown;</string>",
        "<string>&#65</string>",
        "<string>&#xD800;</string>",
        "<string>a<!-- comment -->b</string>",
        "<string>a<b/>c</string>",
        "<integer></integer>",
        "<integer/>",
        "<integer> 5 </integer>",
        "<integer>5a</integer>",
        "<real> 1.5 </real>",
        "<real></real>",
        "<real>1.2.3</real>",
        "<date></date>",
        "<date>2024-02-29T12:34:56</date>",
        "<date>2024-2-29T12:34:56Z</date>",
        "<unknown/>",
        "<dict><key>a</key><unknown>x</unknown></dict>",
    ])
    func rejectsMalformedBodies(body: String) {
        #expect(XMLPropertyListParser.parse(Self.document(body)) == nil)
    }

    @Test(arguments: [
        "<plist version=\"1.0\"><dict/></plist>garbage",
        "<plist version=\"1.0\"><dict/></plist><dict/>",
        "<plist version=\"1.0\"><dict/>",
        "<plist version=\"1.0\"><dict>",
        "<plist version=\"1.0\"></plist>",
        "<plist version=\"1.0\"/>",
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?><plist version=\"1.0\"><dict/></plist>",
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><plist version=\"1.0\"><dict/></plist>",
        // Found by Fuzz/plist: no space after `<?xml`, and an encoding Foundation does not know.
        "<?xml\u{E9}version=\"1.0\" encoding=\"UT\u{C2}-8\"?><plist version=\"1.0\"><dict/></plist>",
        "<?xml-stylesheet encoding=\"latin1\"?><plist version=\"1.0\"><dict/></plist>",
        "<?><true/>",
        "<!DOCTYPE plist [<!ENTITY x \"y\">]><plist version=\"1.0\"><dict/></plist>",
        "<!-- unterminated <plist version=\"1.0\"><dict/></plist>",
        "bplist00",
        "not a plist",
    ])
    func rejectsMalformedDocuments(text: String) {
        #expect(XMLPropertyListParser.parse(Data(text.utf8)) == nil)
    }

    @Test func rejectsInvalidUTF8() {
        var data = Self.document("<string>ab</string>")
        let index = data.firstIndex(of: UInt8(ascii: "b"))!
        data[index] = 0xFF
        #expect(XMLPropertyListParser.parse(data) == nil)
    }

    @Test func rejectsUTF16() throws {
        let text = Self.header.replacingOccurrences(of: "UTF-8", with: "UTF-16") + "<dict/></plist>"
        let data = try #require(text.data(using: .utf16))
        #expect(XMLPropertyListParser.parse(data) == nil)
    }

    // MARK: - The document

    @Test func documentUsesTheParsedRootAndKeepsTheText() throws {
        let data = Self.document(
            "<dict>\n<key>Common</key>\n<dict>\n<key>Port</key>\n<integer>80</integer>\n</dict>\n</dict>")
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(document.root == ["Common": ["Port": 80]])
        #expect(document.line(ofKey: "Port") == 7)
    }

    @Test func documentStillReportsErrorsFromFoundation() {
        let data = Self.document("<dict>\n<key>Common</key>\n<dict>\n<key>Port</key>\n</dict>\n</dict>")
        #expect(XMLPropertyListParser.parse(data) == nil)
        let error = #expect(throws: EnvironmentError.self) { try PropertyListDocument(data: data, file: "test.plist") }
        #expect(error?.code == .malformedFile)
        #expect(error?.line != nil)
    }

    // MARK: - Empty data (issue 32.2)

    /// `<data/>` and `<data></data>` are zero bytes for Apple's and Python's readers; Foundation on
    /// Linux refuses the first, so the parser reads it, and the document expands it for Foundation
    /// when the parser leaves the file to it.
    @Test(arguments: ["<data/>", "<data></data>", "<data>\n    </data>"])
    func emptyDataIsZeroBytes(element: String) throws {
        let data = Self.document("<dict><key>Blob</key>\(element)<key>Name</key><string>x</string></dict>")
        #expect(XMLPropertyListParser.parse(data) == .dictionary(["Blob": .data(Data()), "Name": "x"]))
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(document.root == ["Blob": .data(Data()), "Name": "x"])
    }

    @Test func emptyDataIsZeroBytesWhereFoundationParses() throws {
        // `<true></true>` once left the file to Foundation; the `<data/>` in CDATA is text, kept as is.
        let data = Self.document(
            """
            <dict><key>Blob</key><data/><key>Flag</key><true></true>
            <key>List</key><array><data/><data>AAE=</data></array>
            <key>Text</key><string><![CDATA[<data/>]]></string></dict>
            """)
        #expect(XMLPropertyListParser.parse(data) != nil)
        #expect(XMLPropertyListParser.scan(data).emptyData.count == 2)
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(
            document.root == [
                "Blob": .data(Data()), "Flag": true, "List": [.data(Data()), .data(Data([0, 1]))], "Text": "<data/>",
            ])
    }

    /// A bare `<data/>` as the root element, with no `<plist>` around it: the scan finds it where it
    /// starts, so Foundation is given `<data></data>` (the fuzzer found it was given `<data/>`, and
    /// with trailing whitespace, an offset past the end).
    @Test(arguments: ["<data/>", "<data/>\n\n", "<?xml version=\"1.0\"?>\n<data/>\n"])
    func bareEmptyDataRoot(text: String) throws {
        let data = Data(text.utf8)
        let elements = XMLPropertyListParser.scan(data).emptyData
        #expect(elements.count == 1)
        #expect(elements.allSatisfy { data[$0] == Data("<data/>".utf8) })
        let expanded = try #require(XMLPropertyListParser.expandingEmptyData(data))
        #expect(try PropertyListSerialization.propertyList(from: expanded, format: nil) as? Data == Data())
    }

    @Test func emptyDataInABinaryPropertyList() throws {
        let binary = try PropertyListSerialization.data(
            fromPropertyList: ["Blob": Data(), "List": [Data()]], format: .binary, options: 0)
        let document = try PropertyListDocument(data: binary, file: "test.plist")
        #expect(document.root == ["Blob": .data(Data()), "List": [.data(Data())]])
    }

    @Test func documentStillChecksTheRootType() {
        let data = Self.document("<array/>")
        #expect(XMLPropertyListParser.parse(data) == .array([]))
        let error = #expect(throws: EnvironmentError.self) { try PropertyListDocument(data: data, file: "test.plist") }
        #expect(error?.code == .invalidRoot)
    }
}

/// A small deterministic generator of property-list values, on ``SplitMix``.
private struct Generator {
    private var random: SplitMix

    init(seed: UInt64) { random = SplitMix(seed: seed) }

    mutating func nextRaw() -> UInt64 { random.next() }

    mutating func next(upTo bound: Int) -> Int { Int(nextRaw() % UInt64(bound)) }

    mutating func string() -> String {
        let pieces = [
            "https://setting.example.com/v0", "a & b", "<tag>", "\"quoted\" 'single'", " spaced ", "é", "😀", "中文",
            "\n", "\t", "]]>", "&amp;", "", "${APIHost}", "\r\n",
        ]
        return (0..<next(upTo: 4)).map { _ in pieces[next(upTo: pieces.count)] }.joined()
    }

    mutating func value(depth: Int) -> Any {
        switch next(upTo: depth < 3 ? 10 : 8) {
        case 0, 1: return string()
        case 2: return Int(truncatingIfNeeded: nextRaw()) >> next(upTo: 63)
        case 3: return Double(Int(truncatingIfNeeded: nextRaw()) >> 20) / 1_000
        case 4: return next(upTo: 2) == 0
        case 5: return Date(timeIntervalSinceReferenceDate: Double(next(upTo: 4_000_000_000)) - 2_000_000_000)
        case 6: return Data((0..<next(upTo: 100)).map { _ in UInt8(truncatingIfNeeded: nextRaw()) })
        case 7: return Double(bitPattern: nextRaw() & 0x7FEF_FFFF_FFFF_FFFF)
        case 8: return (0..<next(upTo: 5)).map { _ in value(depth: depth + 1) }
        default:
            var dictionary: [String: Any] = [:]
            for _ in 0..<next(upTo: 5) { dictionary[string() + String(next(upTo: 1000))] = value(depth: depth + 1) }
            return dictionary
        }
    }
}
