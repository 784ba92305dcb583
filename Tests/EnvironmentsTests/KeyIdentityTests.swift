import Foundation
import Testing

@testable import Environments

/// Which keys are the same (issue 44.3): canonically equivalent spellings are one key, in XML
/// and binary files alike (a duplicate, reported, the last copy read); keys compared ignoring
/// case meet by full case mapping (`Straße` and `STRASSE`), for `Secrets` and `APP_` variables.
@Suite struct KeyIdentityTests {
    // MARK: - The rules

    @Test(arguments: [
        ("Straße", "STRASSE"), ("Straße", "strasse"), ("ẞ", "ss"), ("ẞ", "ß"), ("Σσ", "σς"), ("ΣΣ", "σς"),
        ("ﬁle", "FILE"), ("ſ", "s"), ("\u{212A}ey", "KEY"), ("İ", "i\u{307}"), ("ı", "I"),
        ("caf\u{E9}", "CAFE\u{301}"), ("\u{1FB3}", "ΑΙ"), ("Host", "HOST"),
    ])
    func theseMatchIgnoringCase(_ pair: (String, String)) {
        #expect(KeyIdentity.isSameIgnoringCase(pair.0, pair.1), "\(pair)")
        #expect(KeyIdentity.folded(pair.0) == KeyIdentity.folded(pair.1))
        #expect(Set([KeyIdentity.folded(pair.0), KeyIdentity.folded(pair.1)]).count == 1)
    }

    /// No locale's tailoring: the Turkish capital `İ` is `i` with a dot above, not `i`.
    @Test(arguments: [("İ", "i"), ("İ", "I"), ("Straße", "Strase"), ("Σ", "S"), ("Host", "Hosts")])
    func theseDoNotMatch(_ pair: (String, String)) {
        #expect(!KeyIdentity.isSameIgnoringCase(pair.0, pair.1), "\(pair)")
    }

    @Test func canonicallyEquivalentSpellingsAreOneKeyAndCaseCounts() {
        #expect(KeyIdentity.isSame("caf\u{E9}", "cafe\u{301}"))
        #expect(KeyIdentity.isSame("\u{212A}", "K"))
        #expect(!KeyIdentity.isSame("Host", "host"))
        #expect(!KeyIdentity.isSame("Straße", "Strasse"))
    }

    /// Folding a folded key changes nothing, for every character that case mapping changes.
    @Test func foldingIsIdempotent() {
        for value in UInt32(0)...0x10_FFFF {
            guard let scalar = Unicode.Scalar(value),
                scalar.properties.changesWhenCaseMapped || scalar.properties.changesWhenCaseFolded
            else { continue }
            let folded = KeyIdentity.folded(String(scalar))
            #expect(KeyIdentity.folded(folded) == folded, "U+\(String(value, radix: 16))")
        }
    }

    // MARK: - Secrets and APP_ variables

    @Test(arguments: [("Straße", "STRASSE"), ("Σσ", "σς"), ("ΣΑΣ", "σας"), ("ﬁle", "FILE")])
    func aSecretListedInOneSpellingIsSecretInAnother(_ pair: (listed: String, written: String)) throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": [pair.written: "hunter2"], "Secrets": [pair.listed], "Debug": [:],
            ])
            let environment = try Environment(options: directory.options())
            let entry = try #require(environment.configuredValue(forKey: pair.written))
            #expect(entry.isSecret, "\(pair)")
            #expect(entry.displayValue() == "<redacted>")
            #expect(environment.snapshot.coversAsSecret(pair.written))
            #expect(environment.snapshot.coversAsSecret("\(pair.written).Below"))
        }
    }

    @Test func aVariableMatchesAKeyByFullCaseMapping() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Straße": ["Σοφία": "a"], "Plain": "b"], "Secrets": ["Straße.Σοφία"], "Debug": [:],
            ])
            let environment = try Environment(
                options: directory.options(processEnvironment: ["APP_STRASSE__ΣΟΦΊΑ": "c"]))
            let entry = try #require(environment.configuredValue(forKey: "Straße.Σοφία"))
            #expect(entry.value == "c")
            #expect(entry.isSecret)
            #expect(environment.snapshot.leafKeys.sorted() == ["Plain", "Straße.Σοφία"])
        }
    }

    /// "Did you mean" for an undeclared key finds the declared one by the same rule.
    @Test func aSuggestionMatchesByFullCaseMapping() {
        var level = DeclaredLevel()
        level.insert(["Fuß"])
        level.insert(["Host"])
        // `fuss` is two edits from `fuß`, more than a four-letter name is allowed.
        #expect(DeclarationCheck.suggestion(for: "FUSS", among: level) == "Fuß")
        #expect(DeclarationCheck.suggestion(for: "HOST", among: level) == "Host")
        #expect(DeclarationCheck.suggestion(for: "Fuzz", among: level) == nil)
    }

    // MARK: - Duplicates under the rule

    private static let composed = "caf\u{E9}"
    private static let decomposed = "cafe\u{301}"

    /// `Common` with the key `first` and then `second`, valued by their order; `extra` after.
    private static func xml(_ first: String, _ second: String, extra: String = "") -> Data {
        Data(
            """
            <plist version="1.0">
            <dict>
            <key>Common</key>
            <dict>
            <key>\(first)</key><string>first</string>
            <key>\(second)</key><string>second</string>
            </dict>
            \(extra)
            </dict>
            </plist>
            """.utf8)
    }

    /// Expects the root's `Common` of `document` (the file of ``xml(_:_:extra:)`` or its binary
    /// twin) to hold one key, spelled as `second` to the scalar and valued by the second copy,
    /// and the duplicate recorded with both spellings: at `lines` (the first copy's, then the
    /// second's), or at none in a binary file.
    private static func expectOneKeyAsTheLastCopy(
        in document: PropertyListDocument, first: String, second: String, lines: (first: Int, second: Int)?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        guard case .dictionary(let common)? = document.root["Common"] else { throw Missing() }
        try #require(common.count == 1, "\(common)", sourceLocation: sourceLocation)
        let (key, value) = try #require(common.first, sourceLocation: sourceLocation)
        #expect(
            key.unicodeScalars.map(\.value) == second.unicodeScalars.map(\.value), sourceLocation: sourceLocation)
        #expect(value == "second", sourceLocation: sourceLocation)
        #expect(
            document.duplicateKeys == [
                PropertyListDuplicateKey(
                    path: ["Common"], key: second, firstLine: lines?.first, line: lines?.second, firstSpelling: first)
            ], sourceLocation: sourceLocation)
    }

    private struct Missing: Error {}

    /// Both orders, with and without a hexadecimal integer beside (which once left the file to
    /// Foundation's parser): one key, the last copy's spelling and value, and a duplicate
    /// recorded with both spellings.
    @Test(arguments: [false, true], [false, true])
    func xmlKeepsTheLastCopyOfAKeyInTwoForms(decomposedLast: Bool, withHexadecimal: Bool) throws {
        let (first, second) = decomposedLast ? (Self.composed, Self.decomposed) : (Self.decomposed, Self.composed)
        let data = Self.xml(
            first, second, extra: withHexadecimal ? "<key>Hex</key><integer>0x10</integer>" : "")
        #expect(XMLPropertyListParser.parse(data) != nil)
        let document = try PropertyListDocument(data: data, file: "test.plist")
        try Self.expectOneKeyAsTheLastCopy(in: document, first: first, second: second, lines: (5, 6))
        if withHexadecimal { #expect(document.root["Hex"] == 16) }
    }

    /// The same in a binary file: `{Common: {first: "first", second: "second"}}`.
    @Test(arguments: [false, true])
    func binaryKeepsTheLastCopyOfAKeyInTwoForms(decomposedLast: Bool) throws {
        let (first, second) = decomposedLast ? (Self.composed, Self.decomposed) : (Self.decomposed, Self.composed)
        let data = BinaryPropertyListBuilder.document([
            [0xD1, 1, 2],  // {Common: object 2}
            Array([0x56]) + Array("Common".utf8),
            [0xD2, 3, 4, 5, 6],  // keys first, second; values "first", "second"
            BinaryPropertyListBuilder.utf16(first),
            BinaryPropertyListBuilder.utf16(second),
            Array([0x55]) + Array("first".utf8),
            Array([0x56]) + Array("second".utf8),
        ])
        let document = try PropertyListDocument(data: data, file: "test.plist")
        try Self.expectOneKeyAsTheLastCopy(in: document, first: first, second: second, lines: nil)
    }

    @Test func theWarningSaysTheCopiesAreOneKeyInTwoForms() throws {
        try withTemporaryDirectory { directory in
            _ = try directory.write(
                "Environments.plist",
                data: Self.xml(Self.composed, Self.decomposed, extra: "<key>Debug</key><dict/>"))
            let environment = try Environment(options: directory.options())
            #expect(environment.get(Self.composed, default: "") == "second")
            let warning = try #require(environment.snapshot.warnings.first { $0.code == .duplicateKey })
            #expect(warning.line == 6)
            #expect(
                warning.message.contains(
                    "(as U+0063 U+0061 U+0066 U+00E9 and as U+0063 U+0061 U+0066 U+0065 U+0301: one key in two Unicode forms)"
                ), "\(warning)")
        }
    }

    // MARK: - The snapshot's table

    /// The characters that are not ASCII but the same text as an ASCII character, by Swift's own
    /// comparison of every scalar: exactly those ``SettingIndex`` maps.
    @Test func onlyThreeCharactersAreTheSameTextAsASCII() {
        let ascii = Dictionary(uniqueKeysWithValues: (0..<128).map { (String(UnicodeScalar(UInt8($0))), UInt8($0)) })
        var found: [UInt32: UInt8] = [:]
        for value in UInt32(0x80)...0x10_FFFF {
            guard let scalar = Unicode.Scalar(value), let equivalent = ascii[String(scalar)] else { continue }
            found[value] = equivalent
        }
        #expect(found == [0x212A: UInt8(ascii: "K"), 0x037E: UInt8(ascii: ";"), 0x1FEF: UInt8(ascii: "`")])
        for (value, equivalent) in found {
            #expect(SettingIndex.asciiEquivalent(of: Unicode.Scalar(value)!) == equivalent)
        }
    }

    @Test func aTableOfASCIIKeysFindsTheirOtherSpellingsAndNothingElse() {
        let entry = SettingEntry(value: "v", sourceIndex: 0, isSecret: false)
        let index = SettingIndex(["Key": entry, "a;b": entry, "x`": entry])
        #expect(index["\u{212A}ey"] == entry)
        #expect(index["a\u{37E}b"] == entry)
        #expect(index["x\u{1FEF}"] == entry)
        #expect(index["Key"] == entry)
        #expect(index["K\u{301}ey"] == nil)
        #expect(index["Kéy"] == nil)
        #expect(index["\u{212A}ex"] == nil)
        let unicode = SettingIndex(["caf\u{E9}": entry, "Key": entry])
        #expect(unicode["cafe\u{301}"] == entry)
        #expect(unicode["\u{212A}ey"] == entry)
    }
}
