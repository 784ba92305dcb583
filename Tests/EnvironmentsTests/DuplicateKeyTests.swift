import Foundation
import TestSupport
import Testing

@testable import Environments

/// Keys written more than once in one dictionary (issue 31.3): the last copy is read, in XML and
/// binary files alike, as Apple's and Python's readers do, and every duplicate is recorded with
/// the dictionary's key path and, in XML, the lines of both copies.
@Suite struct DuplicateKeyTests {
    private typealias Duplicate = PropertyListDocument.DuplicateKey

    /// One key per line; `extra` goes on line 13, before the root's end.
    private static func document(extra: String = "") -> Data {
        Data(
            """
            <plist version="1.0">
            <dict>
            <key>Common</key>
            <dict>
            <key>Host</key><string>a</string>
            <key>api.example.com</key><dict><key>Port</key><integer>1</integer><key>Port</key><integer>2</integer></dict>
            <key>Host</key><string>b</string>
            </dict>
            <key>Release</key><dict/>
            <key>Common</key>
            <dict><key>Host</key><string>c</string></dict>
            <key>List</key><array><string>x</string><dict><key>x</key><true/><key>x</key><false/></dict></array>
            \(extra)
            </dict>
            </plist>
            """.utf8)
    }

    private static let expected = [
        Duplicate(path: ["Common", "api.example.com"], key: "Port", firstLine: 6, line: 6),
        Duplicate(path: ["Common"], key: "Host", firstLine: 5, line: 7),
        Duplicate(path: [], key: "Common", firstLine: 3, line: 10),
        Duplicate(path: ["List", "[1]"], key: "x", firstLine: 12, line: 12),
    ]

    private static let expectedRoot: [String: SettingValue] = [
        "Common": ["Host": "c"], "Release": [:], "List": ["x", ["x": false]],
    ]

    @Test func theParserRecordsEveryDuplicateWithItsLines() throws {
        let data = Self.document()
        let (value, duplicates) = try #require(XMLPropertyListParser.parseWithDuplicates(data))
        #expect(value == .dictionary(Self.expectedRoot))
        #expect(duplicates.listed == Self.expected)
        #expect(duplicates.unlisted == 0)
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(document.root == Self.expectedRoot)
        #expect(document.duplicateKeys == Self.expected)
        #expect(document.unlistedDuplicateKeyCount == 0)
    }

    /// Unusual forms (`<true></true>`, a hexadecimal integer): the parser reads them, and the
    /// scan of the structure alone (what the fuzzer gives Foundation) finds the same duplicates.
    @Test func theScanFindsThemBesideUnusualForms() throws {
        let data = Self.document(extra: "<key>Flag</key><true></true><key>Hex</key><integer>0x10</integer>")
        #expect(XMLPropertyListParser.parse(data) != nil)
        #expect(XMLPropertyListParser.scan(data).duplicates.listed == Self.expected)
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(document.root["Common"] == ["Host": "c"])
        #expect(document.root["Flag"] == true)
        #expect(document.duplicateKeys == Self.expected)
    }

    @Test func aDocumentWithoutDuplicatesHasNone() throws {
        let data = Data("<plist><dict><key>a</key><dict><key>a</key><string/></dict></dict></plist>".utf8)
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(document.duplicateKeys.isEmpty)
        #expect(document.unlistedDuplicateKeyCount == 0)
    }

    @Test(arguments: [false, true])
    func theListIsBounded(foundationParses: Bool) throws {
        var body = "<key>Same</key><integer>0</integer>"
        for index in 1...150 { body += "\n<key>Same</key><integer>\(index)</integer>" }
        if foundationParses { body += "<key>Flag</key><true></true>" }
        let data = Data("<plist version=\"1.0\"><dict>\(body)</dict></plist>".utf8)
        let document = try PropertyListDocument(data: data, file: "test.plist")
        #expect(document.root["Same"] == .integer(150))
        #expect(document.duplicateKeys.count == PropertyListDuplicateKeys.maximumListed)
        #expect(document.unlistedDuplicateKeyCount == 50)
        #expect(document.duplicateKeys.first == Duplicate(path: [], key: "Same", firstLine: 1, line: 2))
        #expect(document.duplicateKeys.last?.line == 101)
    }

    // MARK: - Binary property lists

    /// `{a: 1, b: {c: 1, c: 2}, a: 3}`, the second `a` a string object of its own.
    private static var binaryWithDuplicates: Data {
        BinaryPropertyListBuilder.document([
            [0xD3, 1, 2, 3, 4, 5, 6],  // the root: keys a, b, a; values 1, {...}, 3
            [0x51, UInt8(ascii: "a")],
            [0x51, UInt8(ascii: "b")],
            [0x51, UInt8(ascii: "a")],
            [0x10, 1],
            [0xD2, 7, 7, 4, 8],  // keys c, c (one object); values 1, 2
            [0x10, 3],
            [0x51, UInt8(ascii: "c")],
            [0x10, 2],
        ])
    }

    @Test func foundationAloneKeepsTheFirstCopyOfABinaryDuplicate() throws {
        let object = try PropertyListSerialization.propertyList(
            from: Self.binaryWithDuplicates, options: [], format: nil)
        #expect(SettingValue(foundationObject: object) == ["a": 1, "b": ["c": 1]])
    }

    @Test func binaryDuplicatesKeepTheLastCopyAndAreRecorded() throws {
        let document = try PropertyListDocument(data: Self.binaryWithDuplicates, file: "test.plist")
        #expect(document.root == ["a": 3, "b": ["c": 2]])
        #expect(
            document.duplicateKeys == [
                Duplicate(path: [], key: "a", firstLine: nil, line: nil),
                Duplicate(path: ["b"], key: "c", firstLine: nil, line: nil),
            ])
    }

    @Test func binaryWithoutDuplicatesIsLeftAsItIs() throws {
        let data = try PropertyListSerialization.data(
            fromPropertyList: ["a": ["b": [1, ["c": "d"]]], "e": "f"], format: .binary, options: 0)
        let inspection = BinaryPropertyListBounds.inspect(data)
        #expect(inspection.problem == nil)
        #expect(inspection.duplicates.count == 0)
    }
}
