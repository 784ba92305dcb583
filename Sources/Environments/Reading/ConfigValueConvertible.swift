import Foundation

/// A type that typed reads can convert a ``ConfigValue`` into.
///
/// Conversions are lenient where interpolation makes it necessary: `${env:PORT}` yields a
/// string, so numeric and boolean strings convert to numbers and booleans.
public protocol ConfigValueConvertible: Sendable {
    /// The type's name in error messages, for example `integer`.
    static var configTypeName: String { get }
    /// Converts a value, or returns `nil` if it has another type.
    init?(configValue: ConfigValue)
}

extension ConfigValue: ConfigValueConvertible {
    /// `value`.
    public static var configTypeName: String { "value" }
    /// Any value.
    public init?(configValue: ConfigValue) { self = configValue }
}

extension String: ConfigValueConvertible {
    /// `string`.
    public static var configTypeName: String { "string" }
    /// Strings; numbers and booleans as text.
    public init?(configValue: ConfigValue) {
        switch configValue {
        case .string(let value): self = value
        case .integer, .double, .bool: self = configValue.description
        default: return nil
        }
    }
}

extension Int: ConfigValueConvertible {
    /// `integer`.
    public static var configTypeName: String { "integer" }
    /// Integers, integral reals and decimal strings.
    public init?(configValue: ConfigValue) {
        switch configValue {
        case .integer(let value): self = value
        case .double(let value):
            guard value.rounded() == value, let exact = Int(exactly: value) else { return nil }
            self = exact
        case .string(let text):
            guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Double: ConfigValueConvertible {
    /// `real`.
    public static var configTypeName: String { "real" }
    /// Reals, integers and numeric strings.
    public init?(configValue: ConfigValue) {
        switch configValue {
        case .double(let value): self = value
        case .integer(let value): self = Double(value)
        case .string(let text):
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Bool: ConfigValueConvertible {
    /// `boolean`.
    public static var configTypeName: String { "boolean" }
    /// Booleans, the integers 0 and 1, and the strings true/false, yes/no, on/off, 1/0.
    public init?(configValue: ConfigValue) {
        switch configValue {
        case .bool(let value): self = value
        case .integer(0): self = false
        case .integer(1): self = true
        case .string(let text):
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "on", "1": self = true
            case "false", "no", "off", "0": self = false
            default: return nil
            }
        default: return nil
        }
    }
}

extension URL: ConfigValueConvertible {
    /// `URL`.
    public static var configTypeName: String { "URL" }
    /// Strings that parse as a URL with a scheme.
    public init?(configValue: ConfigValue) {
        guard case .string(let text) = configValue, let url = URL(string: text), url.scheme != nil else { return nil }
        self = url
    }
}

extension Duration: ConfigValueConvertible {
    /// `duration`.
    public static var configTypeName: String { "duration" }
    /// Numbers (seconds) and strings with systemd's time units.
    public init?(configValue: ConfigValue) {
        switch configValue {
        case .integer(let seconds): self = .seconds(seconds)
        case .double(let seconds): self = .nanoseconds(Int64((seconds * 1e9).rounded()))
        case .string(let text):
            guard let value = DurationParser.parse(text) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Date: ConfigValueConvertible {
    /// `date`.
    public static var configTypeName: String { "date" }
    /// Dates and ISO 8601 strings.
    public init?(configValue: ConfigValue) {
        switch configValue {
        case .date(let value): self = value
        case .string(let text):
            guard let value = try? Date(text, strategy: .iso8601) else { return nil }
            self = value
        default: return nil
        }
    }
}

extension Data: ConfigValueConvertible {
    /// `data`.
    public static var configTypeName: String { "data" }
    /// Data.
    public init?(configValue: ConfigValue) {
        guard case .data(let value) = configValue else { return nil }
        self = value
    }
}

extension Array: ConfigValueConvertible where Element: ConfigValueConvertible {
    /// `array of <element>`.
    public static var configTypeName: String { "array of \(Element.configTypeName)" }
    /// Arrays whose every element converts.
    public init?(configValue: ConfigValue) {
        guard case .array(let values) = configValue else { return nil }
        var result: [Element] = []
        for value in values {
            guard let element = Element(configValue: value) else { return nil }
            result.append(element)
        }
        self = result
    }
}

extension Dictionary: ConfigValueConvertible where Key == String, Value: ConfigValueConvertible {
    /// `dictionary of <value>`.
    public static var configTypeName: String { "dictionary of \(Value.configTypeName)" }
    /// Dictionaries whose every value converts.
    public init?(configValue: ConfigValue) {
        guard case .dictionary(let values) = configValue else { return nil }
        var result: [String: Value] = [:]
        for (key, value) in values {
            guard let converted = Value(configValue: value) else { return nil }
            result[key] = converted
        }
        self = result
    }
}
