import Environments
import Foundation
import Testing

/// `SettingValue`: property-list types, conversions and descriptions.
@Suite struct ValueTests {
    private let numbers: [String: Any] = [
        "Common": [
            "Zero": 0, "One": 1, "Two": 2, "Negative": -1, "RealZero": 0.0, "RealOne": 1.0, "Half": 0.5,
            "True": true, "False": false,
        ],
        "Debug": [:] as [String: Any],
    ]

    private func checkNumbers(_ environment: Environment) {
        #expect(environment.value(forKey: "Zero") == .integer(0))
        #expect(environment.value(forKey: "One") == .integer(1))
        #expect(environment.value(forKey: "Two") == .integer(2))
        #expect(environment.value(forKey: "Negative") == .integer(-1))
        #expect(environment.value(forKey: "RealZero") == .real(0))
        #expect(environment.value(forKey: "RealOne") == .real(1))
        #expect(environment.value(forKey: "Half") == .real(0.5))
        #expect(environment.value(forKey: "True") == .bool(true))
        #expect(environment.value(forKey: "False") == .bool(false))
        #expect(environment.get("One", default: -1) == 1)
        #expect(environment.get("Zero", default: -1) == 0)
        #expect(environment.fetch("One") as? Int == 1)
        #expect(environment.fetch("True") as? Bool == true)
    }

    @Test func integersZeroAndOneAreNotBooleansInXML() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(numbers)
            checkNumbers(try Environment(options: directory.options()))
        }
    }

    @Test func integersZeroAndOneAreNotBooleansInBinary() throws {
        try withTemporaryDirectory { directory in
            try directory.writeBinary(numbers)
            checkNumbers(try Environment(options: directory.options()))
        }
    }

    @Test func propertyListObjects() {
        #expect(SettingValue(propertyList: "a") == .string("a"))
        #expect(SettingValue(propertyList: 1) == .integer(1))
        #expect(SettingValue(propertyList: 0) == .integer(0))
        #expect(SettingValue(propertyList: 1.0) == .real(1))
        #expect(SettingValue(propertyList: true) == .bool(true))
        #expect(SettingValue(propertyList: false) == .bool(false))
        #expect(SettingValue(propertyList: [1, "a", false] as [Any]) == .array([1, "a", false]))
        #expect(SettingValue(propertyList: ["k": ["n": 1]] as [String: Any]) == .dictionary(["k": ["n": 1]]))
        #expect(SettingValue(propertyList: URL(string: "https://a.example")!) == .string("https://a.example"))
        #expect(SettingValue(propertyList: Data([1, 2])) == .data(Data([1, 2])))
        #expect(SettingValue(propertyList: NSObject()) == nil)
        #expect(SettingValue(propertyList: [NSObject()]) == nil)
    }

    @Test func typeNamesAndDescriptions() {
        #expect(SettingValue.string("a").typeName == "string")
        #expect(SettingValue.integer(1).typeName == "integer")
        #expect(SettingValue.real(1).typeName == "real")
        #expect(SettingValue.bool(true).typeName == "boolean")
        #expect(SettingValue.array([]).typeName == "array")
        #expect(SettingValue.dictionary([:]).typeName == "dictionary")
        #expect(SettingValue.data(Data([1, 2, 3])).description == "<3 bytes>")
        #expect(SettingValue.array(["a", 1, true]).description == #"["a", 1, true]"#)
        #expect(SettingValue.dictionary(["b": "x", "a": 2]).description == #"{a: 2, b: "x"}"#)
    }

    @Test func configuredValueDescriptionRedactsSecrets() {
        let secret = ConfiguredValue(value: "s3cret", source: .override, isSecret: true)
        #expect(secret.description == "<redacted> (override)")
        #expect(secret.displayValue(revealSecrets: true) == "s3cret")
        let plain = ConfiguredValue(value: 5, source: ValueSource(layer: .common, file: "/f", section: "Common"))
        #expect(plain.description == "5 (/f [Common])")
        #expect(plain.displayValue() == "5")
    }
}
