package import JSONText

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Encodes an `Encodable` value straight into a ``JSONValue``, with no JSON text in between.
///
/// It makes what `JSONEncoder` with its default strategies followed by a decode into
/// ``JSONValue`` would: `nil` optionals leave their key out, `Data` becomes base64 text, `URL`
/// its absolute string, `Date` its default `Codable` form (seconds since 2001 as a number).
/// Integers that do not fit an `Int` and non-finite reals are errors, as they are for
/// `JSONEncoder`.
///
/// The control socket answers every call with a record, whose members become the reply's
/// parameters. Made with `JSONEncoder` and read back by `JSONDecoder`, the parameters cost 9 to
/// 12 times as much; and `JSONEncoder` writes a `JSONValue` tree as text 3.6 times slower than
/// ``JSONValue/jsonText(pretty:)`` (Benchmarks/json-encoders.sh, in Benchmarks/README.md). Where
/// a whole record becomes text, as the state file and `envctl show --json` do, `JSONEncoder` is
/// used: there it is as fast or faster.
package struct JSONValueEncoder: Sendable {
    package init() {}

    /// The JSON form of `value`.
    package func encode(_ value: some Encodable) throws -> JSONValue {
        try Self.box(value, codingPath: [])
    }

    /// `value` encoded, with fast paths for the types that need no container.
    fileprivate static func box(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONValue {
        switch value {
        case let value as JSONValue: return value
        case let value as String: return .string(value)
        case let value as Int: return .int(value)
        case let value as Bool: return .bool(value)
        case let value as Double: return try real(value, codingPath)
        case let value as Data: return .string(value.base64EncodedString())
        case let value as URL: return .string(value.absoluteString)
        default:
            let node = Node()
            try value.encode(to: NodeEncoder(node: node, codingPath: codingPath))
            return node.value
        }
    }

    fileprivate static func real(_ value: Double, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(value) has no JSON form"))
        }
        return .double(value)
    }

    fileprivate static func integer(_ value: some BinaryInteger, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard let exact = Int(exactly: value) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit in an Int"))
        }
        return .int(exact)
    }
}

/// What one encoder or container writes into: a value, an object or an array, filled in as
/// containers are asked for and written.
private final class Node {
    var scalar: JSONValue?
    var members: [String: Node]?
    var memberValues: [String: JSONValue] = [:]
    var elements: [Node]?

    func makeObject() {
        if members == nil { members = [:] }
    }

    func makeArray() {
        if elements == nil { elements = [] }
    }

    /// The value written; an empty object if nothing was (as `JSONEncoder` writes `{}`).
    var value: JSONValue {
        if let members {
            var object = memberValues
            for (key, node) in members { object[key] = node.value }
            return .object(object)
        }
        if let elements { return .array(elements.map(\.value)) }
        return scalar ?? .object([:])
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(node: node, codingPath: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue, _ key: Key) {
        node.members![key.stringValue] = nil
        node.memberValues[key.stringValue] = value
    }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        set(try JSONValueEncoder.real(value, codingPath + [key]), key)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        set(try JSONValueEncoder.real(Double(value), codingPath + [key]), key)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        set(try JSONValueEncoder.integer(value, codingPath + [key]), key)
    }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        set(try JSONValueEncoder.integer(value, codingPath + [key]), key)
    }
    mutating func encode(_ value: some Encodable, forKey key: Key) throws {
        set(try JSONValueEncoder.box(value, codingPath: codingPath + [key]), key)
    }

    private func child(_ key: String) -> Node {
        let child = Node()
        node.memberValues[key] = nil
        node.members![key] = child
        return child
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = child(key.stringValue)
        child.makeObject()
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = child(key.stringValue)
        child.makeArray()
        return UnkeyedContainer(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: child("super"), codingPath: codingPath + [SuperKey()])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: child(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.elements!.count }

    private func append(_ value: JSONValue) {
        let element = Node()
        element.scalar = value
        node.elements!.append(element)
    }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(count)] }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(try JSONValueEncoder.real(value, nextPath)) }
    mutating func encode(_ value: Float) throws { append(try JSONValueEncoder.real(Double(value), nextPath)) }
    mutating func encode(_ value: Int) throws { append(.int(value)) }
    mutating func encode(_ value: Int8) throws { append(.int(Int(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(Int(value))) }
    mutating func encode(_ value: UInt) throws { append(try JSONValueEncoder.integer(value, nextPath)) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int(value))) }
    mutating func encode(_ value: UInt64) throws { append(try JSONValueEncoder.integer(value, nextPath)) }
    mutating func encode(_ value: some Encodable) throws {
        append(try JSONValueEncoder.box(value, codingPath: nextPath))
    }

    private func child() -> Node {
        let child = Node()
        node.elements!.append(child)
        return child
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let path = nextPath
        let child = child()
        child.makeObject()
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = child()
        child.makeArray()
        return UnkeyedContainer(node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return NodeEncoder(node: child(), codingPath: path)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.scalar = .null }
    mutating func encode(_ value: Bool) throws { node.scalar = .bool(value) }
    mutating func encode(_ value: String) throws { node.scalar = .string(value) }
    mutating func encode(_ value: Double) throws { node.scalar = try JSONValueEncoder.real(value, codingPath) }
    mutating func encode(_ value: Float) throws { node.scalar = try JSONValueEncoder.real(Double(value), codingPath) }
    mutating func encode(_ value: Int) throws { node.scalar = .int(value) }
    mutating func encode(_ value: Int8) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: Int16) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: Int32) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: Int64) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: UInt) throws { node.scalar = try JSONValueEncoder.integer(value, codingPath) }
    mutating func encode(_ value: UInt8) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: UInt16) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: UInt32) throws { node.scalar = .int(Int(value)) }
    mutating func encode(_ value: UInt64) throws { node.scalar = try JSONValueEncoder.integer(value, codingPath) }
    mutating func encode(_ value: some Encodable) throws {
        node.scalar = try JSONValueEncoder.box(value, codingPath: codingPath)
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "Index \(intValue!)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}
