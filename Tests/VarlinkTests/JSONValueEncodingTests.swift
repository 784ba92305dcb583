import Foundation
import JSONText
import Testing
import Varlink

/// `JSONValueEncoder` and `JSONValue.jsonText` against Foundation: encoding a record straight
/// into a `JSONValue` must give what `JSONEncoder` followed by a decode gives, and the text
/// must parse back (with `JSONSerialization` and `JSONDecoder`) to the same value.
struct JSONValueEncodingTests {
    private struct Inner: Codable, Equatable {
        var name: String
        var tags: [String]
    }

    private enum Kind: String, Codable { case alpha, beta }

    private struct Record: Codable, Equatable {
        var text = "a \"quoted\" \\ back\nslash\t\u{1}\u{1F}/é😀"
        var empty = ""
        var integer = -42
        var big: UInt64 = 9_007_199_254_740_993
        var small: Int8 = -8
        var real = 0.1
        var whole = 5.0
        var tiny = 1e-5
        var huge = 1e20
        var float: Float = 1.5
        var flag = true
        var missing: String? = nil
        var present: Int? = 7
        var list = [1, 2, 3]
        var emptyList: [Int] = []
        var nested = [Inner(name: "x", tags: ["a", "b"]), Inner(name: "y", tags: [])]
        var map = ["k": Inner(name: "z", tags: ["c"])]
        var emptyMap: [String: Int] = [:]
        var kind = Kind.beta
        var data = Data([0, 1, 2, 250, 255])
        var url = URL(string: "https://example.com/a?b=c")!
        var matrix = [[1.5], [], [2.5, -3]]
        var optionals: [Int?] = [1, nil, 3]
    }

    /// What Foundation makes of `value`: `JSONEncoder`, then a decode into `JSONValue`.
    private static func foundation(_ value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    /// Integral reals as integers: JSON text does not tell `5.0` from `5`, so a value that went
    /// through text comes back as an integer.
    private static func normalized(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let real): Int(exactly: real).map(JSONValue.int) ?? value
        case .array(let elements): .array(elements.map(normalized))
        case .object(let members): .object(members.mapValues(normalized))
        default: value
        }
    }

    @Test func encodesWhatJSONEncoderEncodes() throws {
        let record = Record()
        let direct = try JSONValueEncoder().encode(record)
        #expect(Self.normalized(direct) == (try Self.foundation(record)))
        #expect(direct.objectValue?["whole"] == .double(5))
        // A nil optional leaves its key out, as the synthesized encode(to:) does.
        #expect(direct.objectValue?["missing"] == nil)
        #expect(direct.objectValue?["present"] == .int(7))
        #expect(direct.objectValue?["data"] == .string("AAEC+v8="))
    }

    @Test func textDecodesBackToTheRecord() throws {
        let record = Record()
        for pretty in [false, true] {
            let text = Data(try JSONValueEncoder().encode(record).jsonText(pretty: pretty))
            #expect(try JSONDecoder().decode(Record.self, from: text) == record)
            #expect(try JSONSerialization.jsonObject(with: text) is [String: Any])
        }
    }

    @Test func compactTextIsSortedAndEscaped() throws {
        let value = JSONValue.object([
            "b": .array([.int(1), .null, .bool(false)]), "a": .string("x\"y\\z\n\u{7}"), "c": .object([:]),
            "d": .double(2.5),
        ])
        #expect(
            String(decoding: value.jsonText(), as: UTF8.self)
                == #"{"a":"x\"y\\z\n\u0007","b":[1,null,false],"c":{},"d":2.5}"#)
    }

    @Test func nonFiniteRealsAreWrittenAsStrings() throws {
        let value = JSONValue.array([.double(.infinity), .double(-.infinity), .double(.nan), .double(1.5)])
        let text = value.jsonText()
        #expect(String(decoding: text, as: UTF8.self) == #"["inf","-inf","nan",1.5]"#)
        #expect(try JSONSerialization.jsonObject(with: Data(text)) is [Any])
    }

    @Test func prettyTextMatchesJSONEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Reals may print differently, and Foundation writes an empty container over three
        // lines (`[`, a blank line, `]`): the comparison leaves both out.
        struct NoReals: Codable {
            var text = "a \"b\" c"
            var list = [1, 2]
            var nested = ["k": ["x": [true]]]
        }
        let ours = String(decoding: try JSONValueEncoder().encode(NoReals()).jsonText(pretty: true), as: UTF8.self)
        let theirs = String(decoding: try encoder.encode(NoReals()), as: UTF8.self)
        #expect(ours == theirs)
        let empty = JSONValue.object(["a": .array([]), "o": .object([:])]).jsonText(pretty: true)
        #expect(String(decoding: empty, as: UTF8.self) == "{\n  \"a\" : [],\n  \"o\" : {}\n}")
    }

    @Test func refusesWhatJSONCannotHold() {
        struct Infinite: Encodable { var value = Double.infinity }
        struct NotANumber: Encodable { var values = [1.0, .nan] }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(Infinite()) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(NotANumber()) }
        #expect(throws: EncodingError.self) { try JSONValueEncoder().encode(UInt64.max) }
        #expect(throws: EncodingError.self) { try JSONValue.parameters(of: [1, 2]) }
    }

    @Test func encodesClassHierarchiesThroughSuperEncoders() throws {
        class Base: Encodable {
            var base = 1
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(base, forKey: .base)
            }
            enum CodingKeys: CodingKey { case base }
        }
        final class Derived: Base {
            var derived = "d"
            override func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(derived, forKey: .derived)
                try super.encode(to: container.superEncoder())
                var list = container.nestedUnkeyedContainer(forKey: .list)
                try list.encode(1)
                var inner = list.nestedContainer(keyedBy: CodingKeys.self)
                try inner.encode("i", forKey: .derived)
            }
            enum CodingKeys: CodingKey { case derived, list }
        }
        let value = Derived()
        #expect(try JSONValueEncoder().encode(value) == (try Self.foundation(value)))
    }

    @Test("control characters, DEL, C1 controls, separators and bidirectional controls are escaped, and decode back")
    func escapesWhatATerminalActsOn() throws {
        let text = "k\u{1B}[2J\u{7}\r\n\0\u{7F}\u{85}\u{9B}\u{2028}\u{2029}\u{202E}\u{2066}é😀"
        let json = JSONValue.object([text: .string(text)]).jsonText()
        let string = String(decoding: json, as: UTF8.self)
        #expect(!string.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        #expect(!string.unicodeScalars.contains { [0x2028, 0x2029, 0x202E, 0x2066].contains($0.value) })
        #expect(string.contains(#"\u001b[2J\u0007\r\n\u0000\u007f\u0085\u009b\u2028\u2029\u202e\u2066é😀"#))
        let decoded = try JSONSerialization.jsonObject(with: Data(json)) as? [String: String]
        #expect(decoded == [text: text])
    }
}
