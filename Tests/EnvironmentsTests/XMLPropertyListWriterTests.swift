import Foundation
import TestSupport
import Testing

@testable import Environments

/// Our XML property-list writer (``XMLPropertyListWriter``, what `envctl set` and `unset` write
/// drop-ins with) against Foundation's: the same bytes for the same values, so that a drop-in
/// Foundation wrote before does not change when rewritten; and what it writes reads back as the
/// same values with our parser.
struct XMLPropertyListWriterTests {
    typealias Generator = BinaryPropertyListParserTests.Generator

    /// Foundation's bytes for `value`.
    private static func foundation(_ value: SettingValue) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: value.anyValue, format: .xml, options: 0)
    }

    /// Checks that our bytes for `value` are Foundation's, showing both when they are not.
    private static func sameAsFoundation(
        _ value: SettingValue, _ comment: String = "", at location: SourceLocation = #_sourceLocation
    ) throws {
        let ours = XMLPropertyListWriter.data(value)
        let theirs = try foundation(value)
        #expect(
            ours == theirs,
            "\(comment)\nours:\n\(String(decoding: ours, as: UTF8.self))\nFoundation:\n\(String(decoding: theirs, as: UTF8.self))",
            sourceLocation: location)
    }

    /// Characters for strings and keys: ASCII, the three XML escapes and the quotes, tab and
    /// line feed, Latin and CJK, a combining accent, characters beyond U+FFFF (sorted after
    /// U+E000...U+FFFD by UTF-16), and the controls XMLCharacters refuses (Foundation writes
    /// them as they are, as does ours).
    static let scalars: [Unicode.Scalar] = [
        "a", "b", "Z", "0", " ", ".", "_", "&", "<", ">", "\"", "'", "\t", "\n", "é", "e", "\u{301}", "ß", "日",
        "本", "\u{FF5E}", "\u{E000}", "\u{FFFD}", "😀", "🎉", "\u{10FFFF}", "\u{1}", "\u{1B}", "\u{7F}", "\r",
        "\u{FEFF}", "\u{2028}", "]",
    ]

    static func string(_ generator: inout Generator, from alphabet: [Unicode.Scalar] = scalars) -> String {
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &generator) {
            text.append(alphabet.randomElement(using: &generator)!)
        }
        return String(text)
    }

    static func real(_ generator: inout Generator) -> Double {
        switch Int.random(in: 0..<8, using: &generator) {
        case 0: return Double(bitPattern: generator.next())
        case 1: return Double(Int.random(in: -1_000...1_000, using: &generator))
        case 2: return Double.random(in: -1...1, using: &generator)
        case 3:
            return [
                0.0, -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e16, 1e17,
                0.1,
            ]
            .randomElement(using: &generator)!
        case 4: return Double(Float.random(in: -1e6...1e6, using: &generator))
        default: return Double.random(in: -1e20...1e20, using: &generator)
        }
    }

    /// A date between years 1 and 9999, in whole seconds when `whole`.
    static func date(_ generator: inout Generator, whole: Bool) -> Date {
        // 0001-01-01 and 9999-12-31T23:59:59, in seconds since 2001-01-01.
        let seconds = Double(Int.random(in: -63_113_904_000...252_423_993_599, using: &generator))
        return Date(
            timeIntervalSinceReferenceDate: whole ? seconds : seconds + Double.random(in: 0..<1, using: &generator))
    }

    /// A random tree of values, `depth` levels at most; with `readable`, only what reads back
    /// as written (see ``roundTrip()``).
    static func tree(_ generator: inout Generator, depth: Int, readable: Bool = false) -> SettingValue {
        let alphabet = readable ? scalars.filter { XMLCharacterSet.readsBack($0) } : scalars
        func text() -> String {
            let text = string(&generator, from: alphabet)
            return readable && text.unicodeScalars.first == "\u{FEFF}" ? "x" + text : text
        }
        switch Int.random(in: 0..<(depth > 0 ? 13 : 10), using: &generator) {
        case 0: return .bool(Bool.random(using: &generator))
        case 1: return .integer(Int.random(in: -300...300, using: &generator))
        case 2: return .integer(Int(bitPattern: UInt(generator.next())))
        case 3, 4:
            let number = real(&generator)
            return .real(readable && number.isNaN ? 1.5 : number)
        case 5: return .date(date(&generator, whole: readable))
        case 6:
            return .data(
                Data(
                    (0..<Int.random(in: 0...120, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }))
        case 7, 8, 9: return .string(text())
        case 10:
            return .array(
                (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                    tree(&generator, depth: depth - 1, readable: readable)
                })
        default:
            var dictionary: [String: SettingValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                dictionary[text()] = tree(&generator, depth: depth - 1, readable: readable)
            }
            return .dictionary(dictionary)
        }
    }

    @Test("the same bytes as Foundation for every kind of value")
    func kinds() throws {
        let values: [String: SettingValue] = [
            "String": "x<&>\"'y é 😀 \t\n end", "Empty": "", "Integer": 1, "Negative": -5, "Max": .integer(.max),
            "Min": .integer(.min), "Zero": 0, "True": true, "False": false, "Real": 1.5, "Tenth": 0.1, "Whole": 3.0,
            "Big": 1e300, "Small": 1e-7, "Huge": 123_456_789_012_345_678.0, "NegativeZero": .real(-0.0),
            "NaN": .real(.nan), "Infinity": .real(.infinity), "MinusInfinity": .real(-.infinity),
            "Subnormal": .real(.leastNonzeroMagnitude), "Largest": .real(.greatestFiniteMagnitude),
            "Reference": .date(Date(timeIntervalSinceReferenceDate: 0)),
            "Fraction": .date(Date(timeIntervalSince1970: 1_234_567_890.75)),
            "Before": .date(Date(timeIntervalSinceReferenceDate: -0.5)),
            "YearOne": .date(Date(timeIntervalSinceReferenceDate: -63_113_904_000)),
            "YearZero": .date(Date(timeIntervalSinceReferenceDate: -63_114_076_800)),
            "Far": .date(Date(timeIntervalSinceReferenceDate: 1e12)),
            "Data": .data(Data((0..<100).map { UInt8($0) })), "NoData": .data(Data()), "Byte": .data(Data([1])),
            "Two": .data(Data([1, 2])), "Line": .data(Data(repeating: 7, count: 51)),
            "EmptyDictionary": [:], "EmptyArray": [], "Array": [1, "two", [3], ["k": 4]],
            "a&b<c>": "keys are escaped too", "\u{FF5E}": 1, "😀": 2, "é": 3, "e\u{301}x": 4, "Z": 5, "a": 6,
        ]
        try Self.sameAsFoundation(.dictionary(values))
        for (key, value) in values { try Self.sameAsFoundation(.dictionary([key: value]), key) }
        try Self.sameAsFoundation(.dictionary([:]))
        try Self.sameAsFoundation(.array([]))
        try Self.sameAsFoundation("a root that is no dictionary")
    }

    @Test("data's lines at every depth, beyond eight tabs too, and of every length")
    func dataLines() throws {
        for count in [0, 1, 2, 3, 50, 51, 52, 53, 54, 57, 58, 200] {
            var value = SettingValue.data(Data((0..<count).map { UInt8(truncatingIfNeeded: $0 * 7) }))
            for depth in 0..<12 {
                value = depth % 2 == 0 ? ["k&\(depth)": value] : [value]
                try Self.sameAsFoundation(value, "\(count) bytes, depth \(depth)")
            }
        }
    }

    @Test("keys sorted as Foundation sorts them: by UTF-16 code units")
    func keyOrder() throws {
        var generator = Generator(state: 7)
        for _ in 0..<50 {
            var dictionary: [String: SettingValue] = [:]
            for index in 0..<20 { dictionary[Self.string(&generator)] = .integer(index) }
            try Self.sameAsFoundation(.dictionary(dictionary))
        }
    }

    @Test("the same bytes as Foundation for 400 random trees")
    func randomTrees() throws {
        for seed in UInt64(1)...400 {
            var generator = Generator(state: seed)
            try Self.sameAsFoundation(Self.tree(&generator, depth: 5), "seed \(seed)")
        }
    }

    @Test("reads back as written with our parser (400 random trees)")
    func roundTrip() throws {
        for seed in UInt64(1)...400 {
            var generator = Generator(state: seed)
            var root: [String: SettingValue] = [:]
            for index in 0..<Int.random(in: 0...6, using: &generator) {
                root["Key\(index)"] = Self.tree(&generator, depth: 5, readable: true)
            }
            let written = XMLPropertyListWriter.data(.dictionary(root))
            let read = try #require(XMLPropertyListParser.parse(written), "seed \(seed)")
            #expect(read == .dictionary(root), "seed \(seed)\n\(String(decoding: written, as: UTF8.self))")
        }
    }

    @Test("a date's fraction of a second is dropped, rounded down, before 2001 too")
    func dateFractions() throws {
        for interval in [-0.5, -1.0, -86_400.25, 0.999, 59.5, -63_113_904_000 + 0.5] {
            let written = XMLPropertyListWriter.data(["D": .date(Date(timeIntervalSinceReferenceDate: interval))])
            let read = try #require(XMLPropertyListParser.parse(written))
            #expect(read == ["D": .date(Date(timeIntervalSinceReferenceDate: interval.rounded(.down)))])
        }
    }
}

/// What of a string reads back as written from an XML property list: not a carriage return
/// (every XML reader reads it as a line feed), not the controls XML 1.0 forbids.
enum XMLCharacterSet {
    static func readsBack(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x10_FFFF: true
        default: false
        }
    }
}
