import Environments
import TestSupport
import Testing

/// A lookup finds a key as Swift compares strings, whatever the table's fast path does with
/// bytes: every stored key found with its own value, near misses not found, and two spellings
/// of one Unicode text one key.
@Suite(.blocking) struct KeyLookupTests {
    /// Keys of every length from 1 to 40 bytes (each tail of the byte-wise hash), with one
    /// byte changed, cut or added: every key finds its value and no near miss finds any.
    @Test func everyKeyAndNoNearMiss() throws {
        var values: [String: SettingValue] = [:]
        for length in 1...40 {
            for variant in 0..<5 {
                let key = String(repeating: "k", count: length - 1) + String(UnicodeScalar(UInt8(97 + variant)))
                values[key] = .string("\(length)-\(variant)")
            }
        }
        let environment = try Environment(values: values)
        for (key, value) in values {
            #expect(environment.value(forKey: key) == value, "\(key)")
            #expect(environment.value(forKey: key + "z") == nil)
            #expect(environment.value(forKey: String(key.dropLast()) + "Z") == nil)
            #expect(environment.value(forKey: "x" + key.dropFirst()) == nil)
        }
        #expect(environment.value(forKey: "") == nil)
    }

    /// Ten thousand keys in one table, looked up in another order.
    @Test func aLargeTable() throws {
        let keys = (0..<10_000).map { "Service\($0 * 7919 % 10_007).Timeout\($0 % 13)" }
        let environment = try Environment(values: Dictionary(uniqueKeysWithValues: keys.map { ($0, .integer(1)) }))
        for key in keys.reversed() {
            #expect(environment.value(forKey: key) == .integer(1))
        }
        #expect(environment.value(forKey: "Service1.Timeout99") == nil)
        // The dictionaries above the leaves are entries too.
        #expect(try environment.require("Service0", as: [String: Int].self)["Timeout0"] == 1)
    }

    /// `é` precomposed (U+00E9) and as `e` with a combining acute accent (U+0301) are one
    /// text, so one key, whichever spelling the file used and the reader asks for.
    @Test func canonicallyEquivalentSpellingsAreOneKey() throws {
        let composed = "Caf\u{E9}.Name"
        let decomposed = "Cafe\u{301}.Name"
        #expect(composed == decomposed)
        let storedComposed = try Environment(values: [composed: "composed", "Plain": "ascii"])
        #expect(try storedComposed.require(decomposed, as: String.self) == "composed")
        #expect(try storedComposed.require(composed, as: String.self) == "composed")
        #expect(try storedComposed.require("Plain", as: String.self) == "ascii")
        let storedDecomposed = try Environment(values: [decomposed: "decomposed"])
        #expect(try storedDecomposed.require(composed, as: String.self) == "decomposed")
    }

    /// The Kelvin sign (U+212A) is canonically the letter K: a key of ASCII letters is found
    /// by a reader who spells it with the sign, and the other way round.
    @Test func aNonASCIIKeyThatIsAnASCIIText() throws {
        let kelvin = "\u{212A}ey"
        #expect(kelvin == "Key")
        let ascii = try Environment(values: ["Key": "ascii", "Other": "other"])
        #expect(try ascii.require(kelvin, as: String.self) == "ascii")
        #expect(ascii.fetch("\u{212A}ez") == nil)
        let sign = try Environment(values: [kelvin: "sign"])
        #expect(try sign.require("Key", as: String.self) == "sign")
        #expect(sign.fetch("Key") as? String == "sign")
    }

    /// Reading one snapshot from several threads at once, ASCII keys and Unicode ones (whose
    /// first lookup makes the table's Unicode index): every read finds its value.
    @Test func concurrentReadsOfOneSnapshot() async throws {
        let keys = (0..<200).map { "K\($0)" } + ["Caf\u{E9}"]
        let snapshot = try Environment(values: Dictionary(uniqueKeysWithValues: keys.map { ($0, .string($0)) }))
            .snapshot
        await withTaskGroup(of: Bool.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var allFound = true
                    for round in 0..<50 {
                        let key = round.isMultiple(of: 7) ? "Cafe\u{301}" : keys[(round * 31 + worker) % 200]
                        let expected = key == "Cafe\u{301}" ? "Caf\u{E9}" : key
                        allFound = allFound && (try? snapshot.require(key, as: String.self)) == expected
                    }
                    return allFound
                }
            }
            for await allFound in group { #expect(allFound) }
        }
    }
}
