#if SwiftConfiguration
    import Configuration
    import Environments

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    extension SettingValue {
        /// The value as swift-configuration content of `type`, converted as the environment's own
        /// typed reads convert (`SettingValueConvertible`): numbers and booleans
        /// read as strings, numeric strings as numbers, `yes`/`no`/`on`/`off`/`true`/`false`/`1`/`0`
        /// as booleans, integral reals as ints. Bytes come from `<data>`, or from a base64 string
        /// (what `${credential:...}` or `${env:...}` give). `nil` when the value does not convert.
        func configContent(as type: ConfigType) -> ConfigContent? {
            switch type {
            case .string: String(settingValue: self).map(ConfigContent.string)
            case .int: Int(settingValue: self).map(ConfigContent.int)
            case .double: Double(settingValue: self).map(ConfigContent.double)
            case .bool: Bool(settingValue: self).map(ConfigContent.bool)
            case .bytes: bytes.map(ConfigContent.bytes)
            case .stringArray: [String](settingValue: self).map(ConfigContent.stringArray)
            case .intArray: [Int](settingValue: self).map(ConfigContent.intArray)
            case .doubleArray: [Double](settingValue: self).map(ConfigContent.doubleArray)
            case .boolArray: [Bool](settingValue: self).map(ConfigContent.boolArray)
            case .byteChunkArray:
                if case .array(let elements) = self {
                    elements.reduce(into: [[UInt8]]?([])) { chunks, element in
                        guard let bytes = element.bytes else { return chunks = nil }
                        chunks?.append(bytes)
                    }.map(ConfigContent.byteChunkArray)
                } else {
                    nil
                }
            }
        }

        /// `<data>` as bytes, or a string that is valid base64.
        private var bytes: [UInt8]? {
            switch self {
            case .data(let data): [UInt8](data)
            case .string(let text): Data(base64Encoded: text).map { [UInt8]($0) }
            default: nil
            }
        }
    }

    extension ConfigType {
        /// The type's name as the environment's errors give it (`integer`, `array of string`).
        var settingTypeName: String {
            switch self {
            case .string: SettingTypeName.of(String.self)
            case .int: SettingTypeName.of(Int.self)
            case .double: SettingTypeName.of(Double.self)
            case .bool: SettingTypeName.of(Bool.self)
            case .bytes: "data"
            case .stringArray: SettingTypeName.of([String].self)
            case .intArray: SettingTypeName.of([Int].self)
            case .doubleArray: SettingTypeName.of([Double].self)
            case .boolArray: SettingTypeName.of([Bool].self)
            case .byteChunkArray: "array of data"
            }
        }
    }
#endif
