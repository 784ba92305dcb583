#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Why a JSON text could not be read.
package struct JSONTextError: Error, Sendable, Hashable {
    /// What is wrong, as the decoder says it (with the offset where it knows one).
    package var reason: String
}

extension JSONValue {
    /// Reads a JSON text (RFC 8259): a document of any JSON type at its root.
    ///
    /// A number without a fraction or exponent that fits `Int` reads as ``int(_:)``; any other,
    /// including an integral one written with a fraction (`2.0`), as ``int(_:)`` when it is
    /// integral and fits, else ``double(_:)``: JSON does not tell the two kinds apart.
    package init(jsonText data: Data) throws(JSONTextError) {
        do {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch let error as DecodingError {
            throw JSONTextError(reason: Self.describe(error))
        } catch {
            throw JSONTextError(reason: "\(error)")
        }
    }

    /// The value as the tree of Swift values `JSONSerialization` makes: `[String: Any]`,
    /// `[Any]`, `String`, `Bool`, `Int`, `Double`, and ``JSONValue/null`` for null.
    package var jsonObject: Any {
        switch self {
        case .null: JSONValue.null
        case .bool(let value): value
        case .int(let value): value
        case .double(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.jsonObject)
        case .object(let members): members.mapValues(\.jsonObject)
        }
    }

    /// A tree of Swift values (as ``jsonObject`` gives) as a JSON value; anything that is no
    /// JSON type (a date, say) is written as its description, a string.
    package init(jsonObject value: Any) {
        switch value {
        case let value as JSONValue: self = value
        case let value as String: self = .string(value)
        case let value as Bool where type(of: value) == Bool.self: self = .bool(value)
        case let value as Int where type(of: value) == Int.self: self = .int(value)
        case let value as Double where type(of: value) == Double.self: self = .double(value)
        case let values as [Any]: self = .array(values.map(JSONValue.init(jsonObject:)))
        case let members as [String: Any]: self = .object(members.mapValues(JSONValue.init(jsonObject:)))
        default: self = .string(String(describing: value))
        }
    }

    /// `value` (of a ``jsonObject`` tree) as a boolean, if it is one.
    package static func boolean(_ value: Any?) -> Bool? {
        guard let value, type(of: value) == Bool.self else { return nil }
        return value as? Bool
    }

    /// `value` (of a ``jsonObject`` tree) as an integer, if it is an integral number.
    package static func integer(_ value: Any?) -> Int? {
        if let value, type(of: value) == Int.self { return value as? Int }
        return number(value).flatMap { Int(exactly: $0) }
    }

    /// `value` (of a ``jsonObject`` tree) as a number, if it is one (not a boolean).
    package static func number(_ value: Any?) -> Double? {
        guard let value else { return nil }
        if type(of: value) == Int.self, let integer = value as? Int { return Double(integer) }
        if type(of: value) == Double.self, let real = value as? Double { return real }
        return nil
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .dataCorrupted(let context), .typeMismatch(_, let context), .valueNotFound(_, let context),
            .keyNotFound(_, let context):
            let underlying = (context.underlyingError).map { " (\($0))" } ?? ""
            return context.debugDescription + underlying
        @unknown default:
            return "\(error)"
        }
    }
}
