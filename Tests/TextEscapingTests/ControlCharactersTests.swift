import Foundation
import Testing
import TextEscaping

/// `ControlCharacters`: what never reaches a terminal, a log line or a journal stream raw.
@Suite("control characters")
struct ControlCharactersTests {
    @Test(
        "each class is escaped as Swift writes it",
        arguments: [
            ("a\u{1B}[31mb", "a\\u{1B}[31mb"), ("line\nforged", "line\\nforged"), ("\r\t\0", "\\r\\t\\0"),
            ("\u{7F}\u{9B}", "\\u{7F}\\u{9B}"), ("\u{2028}\u{2029}", "\\u{2028}\\u{2029}"),
            ("\u{202E}evil\u{2066}", "\\u{202E}evil\\u{2066}"), ("plain é ß 中 🙂 \\ text", "plain é ß 中 🙂 \\ text"),
        ])
    func escapes(text: String, expected: String) {
        #expect(ControlCharacters.escaped(text) == expected)
    }

    @Test("escaping is idempotent, keeps printable text whole, and leaves nothing that needs escaping")
    func everyScalar() {
        var all = ""
        for value in 0..<0x3000 { if let scalar = Unicode.Scalar(value) { all.unicodeScalars.append(scalar) } }
        let once = ControlCharacters.escaped(all)
        #expect(!ControlCharacters.needsEscaping(in: once))
        #expect(ControlCharacters.escaped(once) == once)
        // The fast byte check agrees with the per-scalar rule for every character.
        for scalar in all.unicodeScalars {
            #expect(ControlCharacters.needsEscaping(in: String(scalar)) == ControlCharacters.needsEscaping(scalar))
        }
    }

    @Test("escapedKeepingLineFeeds keeps LF and CRLF, escapes a lone CR and the rest")
    func lineFeeds() {
        #expect(ControlCharacters.escapedKeepingLineFeeds("a\nb\r\nc\rd\u{1B}") == "a\nb\r\nc\\rd\\u{1B}")
    }

    @Test("escapedJSON writes what JSON allows raw as \\u escapes, and the JSON decodes to the same values")
    func json() throws {
        let value = ["key\u{202E}": "v\u{7F}\u{2028}\u{9B}"]
        let raw = String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        let escaped = ControlCharacters.escapedJSON(raw)
        #expect(!ControlCharacters.needsEscaping(in: escaped))
        let decoded = try JSONSerialization.jsonObject(with: Data(escaped.utf8)) as? [String: String]
        #expect(decoded == value)
    }
}
