#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A type that typed reads can convert a ``SettingValue`` into.
///
/// Conversions are lenient where interpolation makes it necessary: `${env:PORT}` yields a
/// string, so numeric and boolean strings convert to numbers and booleans.
///
/// Errors name a type of your own by its Swift name (`LogFormat`), and the library's
/// conversions by the words a configuration file uses (`integer`, `array of string`).
public protocol SettingValueConvertible: Sendable {
    /// Converts a value, or returns `nil` if it has another type.
    init?(settingValue: SettingValue)
}

/// A conforming type of the library's own: named in errors as a configuration file would, and
/// turned back into a ``SettingValue`` (how a declared default joins the defaults layer).
package protocol BuiltInSettingType {
    /// The type's name in error messages, for example `integer`.
    static var settingTypeName: String { get }
    /// The type as a declaration names it (``SettingType``).
    static var settingType: SettingType { get }
    /// The value as a configuration file holds it; `nil` for a collection with an element that is
    /// not of a built-in type.
    var settingValue: SettingValue? { get }
}

/// The names of setting types in error messages.
package enum SettingTypeName {
    /// `type`'s name: the library's word for it (`integer`), else its Swift name.
    package static func of<T>(_ type: T.Type) -> String {
        (type as? any BuiltInSettingType.Type)?.settingTypeName ?? String(describing: type)
    }
}

extension SettingValue: SettingValueConvertible, BuiltInSettingType {
    /// `value`.
    package static var settingTypeName: String { "value" }
    package static var settingType: SettingType { .any }
    package var settingValue: SettingValue? { self }
    /// Any value.
    public init?(settingValue: SettingValue) { self = settingValue }
}

extension String: SettingValueConvertible, BuiltInSettingType {
    /// `string`.
    package static var settingTypeName: String { "string" }
    package static var settingType: SettingType { .string }
    package var settingValue: SettingValue? { .string(self) }
    /// Strings; numbers and booleans as text.
    public init?(settingValue: SettingValue) {
        switch settingValue {
        case .string(let value): self = value
        case .integer, .real, .bool: self = settingValue.description
        default: return nil
        }
    }
}

extension Int: SettingValueConvertible, BuiltInSettingType {
    /// `integer`.
    package static var settingTypeName: String { "integer" }
    package static var settingType: SettingType { .integer }
    package var settingValue: SettingValue? { .integer(self) }
    /// Integers, integral reals and decimal strings.
    public init?(settingValue: SettingValue) {
        switch settingValue {
        case .integer(let value): self = value
        case .real(let value):
            guard value.rounded() == value, let exact = Int(exactly: value) else { return nil }
            self = exact
        case .string(let text):
            guard let value = Int(text.trimmingWhitespace()) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Double: SettingValueConvertible, BuiltInSettingType {
    /// `real`.
    package static var settingTypeName: String { "real" }
    package static var settingType: SettingType { .real }
    package var settingValue: SettingValue? { .real(self) }
    /// Reals, integers and numeric strings.
    public init?(settingValue: SettingValue) {
        switch settingValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        case .string(let text):
            guard let value = Double(text.trimmingWhitespace()) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Bool: SettingValueConvertible, BuiltInSettingType {
    /// `boolean`.
    package static var settingTypeName: String { "boolean" }
    package static var settingType: SettingType { .boolean }
    package var settingValue: SettingValue? { .bool(self) }
    /// Booleans, the integers 0 and 1, and the strings true/false, yes/no, on/off, 1/0.
    public init?(settingValue: SettingValue) {
        switch settingValue {
        case .bool(let value): self = value
        case .integer(0): self = false
        case .integer(1): self = true
        case .string(let text):
            switch text.trimmingWhitespace().lowercased() {
            case "true", "yes", "on", "1": self = true
            case "false", "no", "off", "0": self = false
            default: return nil
            }
        default: return nil
        }
    }
}

extension URL: SettingValueConvertible, BuiltInSettingType {
    /// `URL`.
    package static var settingTypeName: String { "URL" }
    package static var settingType: SettingType { .url }
    package var settingValue: SettingValue? { .string(absoluteString) }
    /// Strings that parse as a URL with a scheme.
    public init?(settingValue: SettingValue) {
        guard case .string(let text) = settingValue, let url = URL(string: text), url.scheme != nil else { return nil }
        self = url
    }
}

extension Duration: SettingValueConvertible, BuiltInSettingType {
    /// `duration`.
    package static var settingTypeName: String { "duration" }
    package static var settingType: SettingType { .duration }
    /// Whole seconds as an integer, else a real number of seconds.
    package var settingValue: SettingValue? {
        let (seconds, attoseconds) = components
        return attoseconds == 0 ? .integer(Int(seconds)) : .real(self.inSeconds)
    }
    /// Numbers (seconds) and strings with systemd's time units.
    public init?(settingValue: SettingValue) {
        switch settingValue {
        case .integer(let seconds): self = .seconds(seconds)
        case .real(let seconds):
            // Infinity, NaN and anything beyond ±292 years would trap in Int64's initializer.
            let nanoseconds = (seconds * 1e9).rounded()
            guard nanoseconds.isFinite, let exact = Int64(exactly: nanoseconds) else { return nil }
            self = .nanoseconds(exact)
        case .string(let text):
            guard let value = DurationParser.parse(text) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Date: SettingValueConvertible, BuiltInSettingType {
    /// `date`.
    package static var settingTypeName: String { "date" }
    package static var settingType: SettingType { .date }
    package var settingValue: SettingValue? { .date(self) }
    /// Dates and ISO 8601 strings.
    public init?(settingValue: SettingValue) {
        switch settingValue {
        case .date(let value): self = value
        case .string(let text):
            guard let value = try? Date(text, strategy: .iso8601) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Data: SettingValueConvertible, BuiltInSettingType {
    /// `data`.
    package static var settingTypeName: String { "data" }
    package static var settingType: SettingType { .data }
    package var settingValue: SettingValue? { .data(self) }
    /// Data.
    public init?(settingValue: SettingValue) {
        guard case .data(let value) = settingValue else { return nil }
        self = value
    }
}

extension Array: SettingValueConvertible, BuiltInSettingType where Element: SettingValueConvertible {
    /// `array of <element>`.
    package static var settingTypeName: String { "array of \(SettingTypeName.of(Element.self))" }
    package static var settingType: SettingType { .array(SettingType.of(Element.self)) }
    /// `nil` when an element is not of a built-in type.
    package var settingValue: SettingValue? {
        var values: [SettingValue] = []
        for element in self {
            guard let value = (element as? any BuiltInSettingType)?.settingValue else { return nil }
            values.append(value)
        }
        return .array(values)
    }
    /// Arrays whose every element converts.
    public init?(settingValue: SettingValue) {
        guard case .array(let values) = settingValue else { return nil }
        var result: [Element] = []
        for value in values {
            guard let element = Element(settingValue: value) else { return nil }
            result.append(element)
        }
        self = result
    }
}

extension Dictionary: SettingValueConvertible, BuiltInSettingType where Key == String, Value: SettingValueConvertible {
    /// `dictionary of <value>`.
    package static var settingTypeName: String { "dictionary of \(SettingTypeName.of(Value.self))" }
    package static var settingType: SettingType { .map(SettingType.of(Value.self)) }
    /// `nil` when a value is not of a built-in type.
    package var settingValue: SettingValue? {
        var values: [String: SettingValue] = [:]
        for (key, element) in self {
            guard let value = (element as? any BuiltInSettingType)?.settingValue else { return nil }
            values[key] = value
        }
        return .dictionary(values)
    }
    /// Dictionaries whose every value converts.
    public init?(settingValue: SettingValue) {
        guard case .dictionary(let values) = settingValue else { return nil }
        var result: [String: Value] = [:]
        for (key, value) in values {
            guard let converted = Value(settingValue: value) else { return nil }
            result[key] = converted
        }
        self = result
    }
}
