#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// One configuration value, as a property list can express it.
///
/// Values are immutable and `Sendable`, so a snapshot holding them can be read from any
/// thread. Property-list types map one to one: `<string>`, `<integer>`, `<real>`,
/// `<true/>`/`<false/>`, `<date>`, `<data>`, `<array>` and `<dict>`.
public enum SettingValue: Sendable, Hashable {
    /// A `<string>`.
    case string(String)
    /// An `<integer>`.
    case integer(Int)
    /// A `<real>`.
    case real(Double)
    /// A `<true/>` or `<false/>`.
    case bool(Bool)
    /// A `<date>`.
    case date(Date)
    /// A `<data>` blob.
    case data(Data)
    /// An `<array>`; arrays replace each other whole when layers merge.
    case array([SettingValue])
    /// A `<dict>`; dictionaries merge key by key when layers merge.
    case dictionary([String: SettingValue])

    /// The name of the value's type, as used in error messages (`string`, `integer`, ...).
    package var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// The value as the Foundation object a property-list parser returns:
    /// `String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]` or `[String: Any]`.
    ///
    /// This is what ``ConfigurationReading/fetch(_:)`` returns, as the Objective-C original did:
    /// read it with `fetch`.
    package var anyValue: Any {
        let value = self
        return value.movedIntoAny()
    }

    /// `anyValue`, moving the value into the `Any` rather than copying it: `fetch`'s
    /// common case costs one reference count update less.
    consuming func movedIntoAny() -> Any {
        switch consume self {
        case .string(let value): value
        case .integer(let value): value
        case .real(let value): value
        case .bool(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let values): values.map(\.anyValue)
        case .dictionary(let values): values.mapValues(\.anyValue)
        }
    }

    /// Converts a Swift value (written by hand in a dictionary literal, say) into a
    /// ``SettingValue``: `String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `URL` (its absolute
    /// string), `[Any]` and `[String: Any]` of them, or a ``SettingValue``.
    ///
    /// Returns `nil` for values a property list cannot hold. The objects of Foundation's
    /// `PropertyListSerialization` (`NSNumber`) go through `init?(foundationObject:)`, which
    /// tells a boolean from an integer and refuses integers beyond `Int`.
    package init?(propertyList value: Any) {
        self.init(propertyList: value, leaf: { _ in nil })
    }

    /// `init(propertyList:)`, with `leaf` asked first for every value that is no array or
    /// dictionary (Foundation's `NSNumber`, where Foundation is linked).
    package init?(propertyList value: Any, leaf: (Any) -> SettingValue??) {
        if let converted = leaf(value) {
            guard let converted else { return nil }
            self = converted
            return
        }
        switch value {
        case let value as SettingValue:
            self = value
        case let value as String:
            self = .string(value)
        case let flag as Bool where type(of: value) == Bool.self:
            self = .bool(flag)
        case let value as Int where type(of: value) == Int.self:
            self = .integer(value)
        case let value as Double where type(of: value) == Double.self:
            self = .real(value)
        case let value as Date:
            self = .date(value)
        case let value as Data:
            self = .data(value)
        case let value as URL:
            self = .string(value.absoluteString)
        case let values as [Any]:
            var converted: [SettingValue] = []
            converted.reserveCapacity(values.count)
            for element in values {
                guard let value = SettingValue(propertyList: element, leaf: leaf) else { return nil }
                converted.append(value)
            }
            self = .array(converted)
        case let values as [String: Any]:
            var converted: [String: SettingValue] = [:]
            converted.reserveCapacity(values.count)
            for (key, element) in values {
                guard let value = SettingValue(propertyList: element, leaf: leaf) else { return nil }
                converted[key] = value
            }
            self = .dictionary(converted)
        default:
            return nil
        }
    }
}

extension SettingValue: CustomStringConvertible {
    /// The value as text: strings as they are, numbers and booleans as written in a plist,
    /// arrays and dictionaries in a compact bracketed form.
    public var description: String {
        switch self {
        case .string(let value): value
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .bool(let value): value ? "true" : "false"
        case .date(let value): value.formatted(.iso8601)
        case .data(let value): "<\(value.count) bytes>"
        case .array(let values): "[" + values.map(\.quotedDescription).joined(separator: ", ") + "]"
        case .dictionary(let values):
            "{" + values.keys.sorted().map { "\($0): \(values[$0]!.quotedDescription)" }.joined(separator: ", ")
                + "}"
        }
    }

    private var quotedDescription: String {
        if case .string(let value) = self { return "\"\(value)\"" }
        return description
    }
}

extension SettingValue: ExpressibleByStringLiteral {
    /// Creates a `.string` value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension SettingValue: ExpressibleByIntegerLiteral {
    /// Creates an `.integer` value.
    public init(integerLiteral value: Int) { self = .integer(value) }
}

extension SettingValue: ExpressibleByFloatLiteral {
    /// Creates a `.real` value.
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension SettingValue: ExpressibleByBooleanLiteral {
    /// Creates a `.bool` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension SettingValue: ExpressibleByArrayLiteral {
    /// Creates an `.array` value.
    public init(arrayLiteral elements: SettingValue...) { self = .array(elements) }
}

extension SettingValue: ExpressibleByDictionaryLiteral {
    /// Creates a `.dictionary` value.
    public init(dictionaryLiteral elements: (String, SettingValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension String {
    /// The word with "a" or "an" in front, for error messages: "an integer", "a string".
    var withArticle: String {
        guard let first = first?.lowercased().first else { return self }
        return ("aeio".contains(first) ? "an " : "a ") + self
    }
}
