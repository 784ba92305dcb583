#if SwiftConfiguration
    import Configuration
    import ConfigurationTesting
    import Environments
    import EnvironmentsConfiguration
    import Foundation
    import Testing

    /// swift-configuration's own conformance suite, over an in-memory environment and over one
    /// loaded from real files (values in `Common`, some overridden by the environment's section
    /// and a drop-in, so layering is part of what it checks).
    @Suite("ProviderCompatTest")
    struct ProviderCompatTests {
        static let magic = Data([0x6d, 0x61, 0x67, 0x69, 0x63])
        static let magic2 = Data([0x6d, 0x61, 0x67, 0x69, 0x63, 0x32])

        /// The values `ProviderCompatTest` expects, as dotted keys.
        static var values: [String: Any] {
            [
                "string": "Hello", "other.string": "Other Hello",
                "int": 42, "other.int": 24,
                "double": 3.14, "other.double": 2.72,
                "bool": true, "other.bool": false,
                "bytes": magic, "other.bytes": magic2,
                "stringy.array": ["Hello", "World"], "other.stringy.array": ["Hello", "Swift"],
                "inty.array": [42, 24], "other.inty.array": [16, 32],
                "doubly.array": [3.14, 2.72], "other.doubly.array": [0.9, 1.8],
                "booly.array": [true, false], "other.booly.array": [false, true, true],
                "byteChunky.array": [magic, magic2], "other.byteChunky.array": [magic, magic2, magic],
            ]
        }

        /// The dotted keys as nested dictionaries, as a property list holds them.
        static func nested(_ flat: [String: Any]) -> [String: Any] {
            var root: [String: Any] = [:]
            func insert(_ value: Any, at path: ArraySlice<String>, into dictionary: inout [String: Any]) {
                guard let first = path.first else { return }
                if path.count == 1 {
                    dictionary[first] = value
                } else {
                    var child = dictionary[first] as? [String: Any] ?? [:]
                    insert(value, at: path.dropFirst(), into: &child)
                    dictionary[first] = child
                }
            }
            for (key, value) in flat { insert(value, at: key.split(separator: ".").map(String.init)[...], into: &root) }
            return root
        }

        @Test("in-memory environment")
        func inMemory() async throws {
            let environment = try Environment(values: Self.values.mapValues { SettingValue(propertyList: $0)! })
            try await ProviderCompatTest(provider: EnvironmentProvider(environment: environment)).runTest()
        }

        @Test("environment loaded from files: Common, the environment's section and a drop-in")
        func fromFiles() async throws {
            try await withConfigurationDirectory { directory in
                var common = Self.values
                common["string"] = "from Common"
                common["other.inty.array"] = [1]
                try directory.write([
                    "Common": Self.nested(common),
                    "Production": Self.nested(["string": "Hello"]),
                ])
                try directory.write(
                    ["Production": Self.nested(["other.inty.array": [16, 32]])],
                    to: "Environments.plist.d/50-test.plist")
                let environment = try Environment(options: directory.options())
                try await ProviderCompatTest(provider: EnvironmentProvider(environment: environment)).runTest()
            }
        }
    }
#endif
