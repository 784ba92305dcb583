import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Reads and rewrites a drop-in's property list for `set` and `unset`.
package enum DropInDocument {
    /// The drop-in's root dictionary (empty for a new one), read as the daemon reads it
    /// (`PropertyListReading`): `String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]` and
    /// `[String: Any]` values.
    package static func root(_ data: Data?, path: String) throws -> [String: Any] {
        guard let data else { return [:] }
        do {
            return try PropertyListReading.root(data, file: path).mapValues(\.anyValue)
        } catch let error where error.code == .invalidRoot {
            throw Failure(.malformedFile, "\(path): the root is not a dictionary; fix it with envctl edit", file: path)
        } catch {
            // `not a valid property list: unknown element <strin>` says "not a property list" once.
            let reason =
                error.message.hasPrefix("not a valid property list: ")
                ? String(error.message.dropFirst("not a valid property list: ".count)) : error.message
            let place = error.line.map { "line \($0): " } ?? ""
            throw Failure(
                .malformedFile, "\(path): not a property list (\(place)\(reason)); fix it with envctl edit",
                file: path, line: error.line)
        }
    }

    /// An XML property list of `root`, byte for byte as Foundation's `PropertyListSerialization`
    /// writes it (`XMLPropertyListWriter`), which every property-list reader reads as written: a
    /// key or string with a character that is not ``XMLCharacters/isWritable(_:)`` is refused.
    package static func data(_ root: [String: Any]) throws -> Data {
        try XMLCharacters.check(root)
        guard let value = SettingValue(propertyList: root) else {
            throw Failure(.fileUnwritable, "cannot write the property list: it holds a value no property list holds")
        }
        return XMLPropertyListWriter.data(value)
    }

    /// The key path's components (`SettingPath`: `Upstreams."api.example.com".Port`); a
    /// malformed path, or one past its bounds, is an error.
    package static func components(_ key: String) throws -> [String] {
        do {
            return try SettingPath(parsing: key).components
        } catch {
            throw Failure(.invalidKey, "\(error.message). \(error.hint ?? "")", key: key)
        }
    }

    /// `dictionary` with `value` at `path` (`nil` removes it), creating dictionaries on the way.
    ///
    /// - Parameter trail: The path so far, for errors.
    package static func setting(
        _ value: Any?, at path: ArraySlice<String>, in dictionary: [String: Any], trail: String
    ) throws -> [String: Any] {
        var dictionary = dictionary
        let key = path.first!
        let here = SettingPath.joined(trail, key)
        if path.count == 1 {
            dictionary[key] = value
            return dictionary
        }
        let child: [String: Any]
        switch dictionary[key] {
        case nil:
            if value == nil { return dictionary }
            child = [:]
        case let existing as [String: Any]:
            child = existing
        case let other?:
            throw Failure(
                .invalidKey, "'\(here)' is \(typeName(other)), not a dictionary: the key path cannot go through it",
                key: here)
        }
        let changed = try setting(value, at: path.dropFirst(), in: child, trail: here)
        // An emptied dictionary goes too, so that unset leaves no empty shells behind.
        dictionary[key] = changed.isEmpty && value == nil ? nil : changed
        return dictionary
    }

    /// Whether `path` has a value in `dictionary`.
    package static func contains(_ path: ArraySlice<String>, in dictionary: [String: Any]) -> Bool {
        guard let value = dictionary[path.first!] else { return false }
        if path.count == 1 { return true }
        guard let child = value as? [String: Any] else { return false }
        return contains(path.dropFirst(), in: child)
    }

    package static func typeName(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case is Bool: "a boolean"
        case is Int, is Int64: "an integer"
        case is Double: "a real"
        case is Date: "a date"
        case is Data: "data"
        case is [Any]: "an array"
        default: "a \(type(of: value))"
        }
    }

    /// The note that rewriting drops the comments of a hand-written file, or `nil` when
    /// `data` has none.
    package static func commentsNote(_ data: Data?, path: String) -> String? {
        guard let data, let text = String(data: data, encoding: .utf8), text.contains("<!--") else { return nil }
        return "note: \(path) is rewritten as plain XML; its comments are not kept (envctl edit keeps them)"
    }
}
