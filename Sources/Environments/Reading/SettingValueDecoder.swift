#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A `Decoder` over a ``SettingValue``, used by ``ConfigurationReading/decode(_:from:)``.
///
/// Scalars convert as the typed reads do (``SettingValueConvertible``), so strings produced by
/// interpolation decode as numbers, booleans, URLs and durations.
struct SettingValueDecoder: Decoder {
    let value: SettingValue
    let codingPath: [any CodingKey]
    let prefix: String?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The key path of the current position, for errors: `Endpoints[1].URL`, a key that holds a
    /// dot quoted (``SettingPath``).
    var keyPath: String {
        Self.describe(
            (prefix.map { [$0] } ?? [])
                + codingPath.map { $0.intValue.map { "[\($0)]" } ?? SettingPath.quoted($0.stringValue) })
    }

    /// `parts` (a path's canonical text first, then quoted keys and `[N]` indices) as one path.
    static func describe(_ parts: [String]) -> String {
        parts.joined(separator: ".").replacingEvery(".[", with: "[")
    }

    func mismatch(_ expected: String, _ found: SettingValue) -> EnvironmentError {
        EnvironmentError(
            .decodingFailed, "'\(keyPath)' is \(found.typeName.withArticle), expected \(expected)", key: keyPath)
    }

    func child(_ value: SettingValue, _ key: any CodingKey) -> SettingValueDecoder {
        SettingValueDecoder(value: value, codingPath: codingPath + [key], prefix: prefix)
    }

    func convert<T: SettingValueConvertible>(_ type: T.Type) throws -> T {
        guard let converted = T(settingValue: value) else { throw mismatch(SettingTypeName.of(T.self), value) }
        return converted
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let values) = value else { throw mismatch("dictionary", value) }
        return KeyedDecodingContainer(Keyed<Key>(decoder: self, values: values))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let values) = value else { throw mismatch("array", value) }
        return Unkeyed(decoder: self, values: values)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    func decodeAny<T: Decodable>(_ type: T.Type) throws -> T {
        // Scalars convert leniently; collections decode element by element so errors name the index.
        if let convertible = type as? any SettingValueConvertible.Type,
            type == String.self || !(type is any Collection.Type)
        {
            return try convert(convertible) as! T
        }
        return try T(from: self)
    }

    struct IndexKey: CodingKey {
        var stringValue: String { String(intValue!) }
        var intValue: Int?
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: SettingValueDecoder
        let values: [String: SettingValue]
        var codingPath: [any CodingKey] { decoder.codingPath }
        var allKeys: [Key] { values.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

        func entry(_ key: Key) throws -> SettingValue {
            guard let value = values[key.stringValue] else {
                let path = decoder.child(.string(""), key).keyPath
                throw EnvironmentError(.missingKey, "required key '\(path)' has no value", key: path)
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool { values[key.stringValue] == nil }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decoder.child(try entry(key), key).decodeAny(type)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try decoder.child(try entry(key), key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try decoder.child(try entry(key), key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder.child(try entry(key), key) }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: SettingValueDecoder
        let values: [SettingValue]
        var currentIndex = 0
        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { values.count }
        var isAtEnd: Bool { currentIndex >= values.count }

        init(decoder: SettingValueDecoder, values: [SettingValue]) {
            self.decoder = decoder
            self.values = values
        }

        mutating func next() throws -> SettingValueDecoder {
            guard !isAtEnd else {
                throw EnvironmentError(
                    .decodingFailed, "'\(decoder.keyPath)' has too few elements", key: decoder.keyPath)
            }
            defer { currentIndex += 1 }
            return decoder.child(values[currentIndex], IndexKey(currentIndex))
        }

        mutating func decodeNil() throws -> Bool { false }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeAny(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try next().unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder { try next() }
    }

    struct Single: SingleValueDecodingContainer {
        let decoder: SettingValueDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        func decodeNil() -> Bool { false }
        func decode(_ type: Bool.Type) throws -> Bool { try decoder.convert(Bool.self) }
        func decode(_ type: String.Type) throws -> String { try decoder.convert(String.self) }
        func decode(_ type: Double.Type) throws -> Double { try decoder.convert(Double.self) }
        func decode(_ type: Float.Type) throws -> Float { Float(try decoder.convert(Double.self)) }
        func decode(_ type: Int.Type) throws -> Int { try decoder.convert(Int.self) }
        func decode(_ type: Int8.Type) throws -> Int8 { try exact(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try exact(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try exact(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try exact(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try exact(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try exact(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try exact(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try exact(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try exact(type) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeAny(type) }

        private func exact<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            guard let value = T(exactly: try decoder.convert(Int.self)) else {
                throw decoder.mismatch("\(T.self)", decoder.value)
            }
            return value
        }
    }
}
