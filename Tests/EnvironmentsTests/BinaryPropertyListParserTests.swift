import Foundation
import TestSupport
import Testing

@testable import Environments

/// Binary property lists are decoded by our own parser (``BinaryPropertyListParser``), not
/// Foundation's `PropertyListSerialization`: every value a writer makes reads as Foundation
/// reads it, and what no setting can hold is refused with the key that holds it.
struct BinaryPropertyListParserTests {
    /// A small deterministic generator (SplitMix64), so that a failure names a seed that
    /// reproduces it.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A random property-list tree of Foundation objects, `depth` levels at most.
    static func tree(_ generator: inout Generator, depth: Int) -> Any {
        let strings = ["", "a", "Port", "héllo", "日本語", "emoji 🎉", String(repeating: "x", count: 40), "tab\there"]
        switch Int.random(in: 0..<(depth > 0 ? 12 : 9), using: &generator) {
        case 0: return Bool.random(using: &generator)
        case 1: return Int.random(in: -300...300, using: &generator)
        case 2: return Int(bitPattern: UInt(generator.next()))
        case 3: return Double.random(in: -1e9...1e9, using: &generator)
        case 4: return Float(Double.random(in: -1e3...1e3, using: &generator))
        case 5:
            return Date(
                timeIntervalSinceReferenceDate: Double(
                    Int.random(in: -1_000_000_000...1_000_000_000, using: &generator)) / 8)
        case 6:
            return Data(
                (0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
                })
        case 7, 8: return strings.randomElement(using: &generator)! + String(Int.random(in: 0...9, using: &generator))
        case 9: return (0..<Int.random(in: 0...5, using: &generator)).map { _ in tree(&generator, depth: depth - 1) }
        default:
            var dictionary: [String: Any] = [:]
            for index in 0..<Int.random(in: 0...6, using: &generator) {
                dictionary[strings.randomElement(using: &generator)! + "\(index)"] = tree(&generator, depth: depth - 1)
            }
            return dictionary
        }
    }

    @Test("every file Foundation writes reads as Foundation reads it (500 random trees)")
    func readsAsFoundation() throws {
        for seed in UInt64(1)...500 {
            var generator = Generator(state: seed)
            var root: [String: Any] = [:]
            for index in 0..<Int.random(in: 1...8, using: &generator) {
                root["Key\(index)"] = Self.tree(&generator, depth: 4)
            }
            let data = try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
            let foundation = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
            let expected = try #require(SettingValue(foundationObject: foundation), "seed \(seed)")
            let document = try PropertyListDocument(data: data, file: "seed-\(seed).plist")
            #expect(SettingValue.dictionary(document.root) == expected, "seed \(seed)")
            #expect(document.text == nil)
        }
    }

    @Test("integers of every size, reals of both sizes and dates read exactly")
    func scalars() throws {
        let root: [String: Any] = [
            "Small": 7, "Byte": 255, "Short": 65_535, "Word": 4_294_967_295, "Negative": -1, "Min": Int.min,
            "Max": Int.max, "Float": Float(1.5), "Double": 0.1, "Date": Date(timeIntervalSinceReferenceDate: -0.5),
            "Empty": Data(), "Text": "ünïcödé", "On": true, "Off": false,
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
        let document = try PropertyListDocument(data: data, file: "scalars.plist")
        #expect(document.root["Small"] == .integer(7))
        #expect(document.root["Byte"] == .integer(255))
        #expect(document.root["Short"] == .integer(65_535))
        #expect(document.root["Word"] == .integer(4_294_967_295))
        #expect(document.root["Negative"] == .integer(-1))
        #expect(document.root["Min"] == .integer(Int.min))
        #expect(document.root["Max"] == .integer(Int.max))
        #expect(document.root["Float"] == .real(1.5))
        #expect(document.root["Double"] == .real(0.1))
        #expect(document.root["Date"] == .date(Date(timeIntervalSinceReferenceDate: -0.5)))
        #expect(document.root["Empty"] == .data(Data()))
        #expect(document.root["Text"] == .string("ünïcödé"))
        #expect(document.root["On"] == .bool(true) && document.root["Off"] == .bool(false))
    }

    @Test("an integer above Int.max (a 16-byte integer) is refused, naming its key")
    func hugeIntegerIsRefused() throws {
        let root: [String: Any] = ["Common": ["Limits": ["Huge": UInt64.max]]]
        let data = try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
        let error = #expect(throws: EnvironmentError.self) {
            try PropertyListDocument(data: data, file: "huge.plist")
        }
        #expect(error?.code == .malformedFile)
        #expect(error?.key == "Common.Limits.Huge", "\(error as Any)")
        #expect(
            error?.message.contains("the integer 18446744073709551615, outside the range") == true, "\(error as Any)")
    }

    @Test("a root that is not a dictionary is refused as XML's is")
    func rootMustBeADictionary() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: [1, 2], format: .binary, options: 0)
        let error = #expect(throws: EnvironmentError.self) {
            try PropertyListDocument(data: data, file: "array.plist")
        }
        #expect(error?.code == .invalidRoot)
        #expect(error?.message.contains("the root of the property list is an array") == true, "\(error as Any)")
    }
}
