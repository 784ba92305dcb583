import JSONText

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// A JSON Schema document that cannot be read back as a ``SettingsDeclaration``: what is
/// wrong, and where in the document (a JSON pointer).
package struct SettingsSchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where in the document, as a JSON pointer (`/properties/Database/properties/Port`).
    package let pointer: String
    /// What is wrong.
    package let message: String

    /// Creates an error.
    package init(_ message: String, at pointer: String = "") {
        self.message = message
        self.pointer = pointer
    }

    /// The message, with where in the document.
    package var description: String {
        pointer.isEmpty ? "invalid settings schema: \(message)" : "invalid settings schema at \(pointer): \(message)"
    }
}

/// The declaration as a JSON Schema (draft 2020-12) of the effective configuration, and back.
///
/// The schema describes the configuration as one nested object, as `envctl show --json` and
/// a snapshot's values hold it: a dotted key is a nested `properties` entry, a map
/// is an object's `additionalProperties`, an array's elements are its `items`. What a
/// declaration says that JSON Schema has no word for is written in annotations of our own,
/// which validators ignore:
///
/// - `x-type`: the setting's type (`string`, `integer`, `real`, `boolean`, `url`, `duration`,
///   `date`, `data`, `array`, `map`, `section`, `any`, `custom`), with `x-swift-type` for a
///   type of the application's own;
/// - `x-secret`, `x-restart-only`: `true` for a secret or restart-only setting;
/// - `x-former-names`: the keys it had in earlier releases (``SettingPath`` text);
/// - `x-required-in`: the environments it is required in, when not in every one (a setting
///   required everywhere is in its parent's `required` list);
/// - `x-range`: the range as the program wrote it, for messages; `x-url-schemes`: the schemes
///   a URL may have;
/// - `x-order`: the setting's place in the declaration, so that a declaration read back checks
///   (and reports) in the program's order.
///
/// A duration is a number of seconds or a string in systemd's units (`500ms`, `1min 30s`); its
/// `minimum` and `maximum` are in seconds. A pattern is written anchored (`^(?:...)$`), as the
/// check matches it whole.
extension SettingsDeclaration {
    /// The `$schema` of the documents this writes and reads.
    package static let jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// A string a duration parses from, in JSON Schema's (ECMA 262) regular expressions.
    package static let durationPattern =
        "^\\s*([0-9.]+ *(ns|nsec|us|usec|µs|ms|msec|s|sec|second|seconds|m|min|minute|minutes|h|hr|hour|hours|d|day|days|w|week|weeks)? *)+\\s*$"

    /// The declaration as a JSON Schema document, pretty-printed with sorted keys.
    ///
    /// - Parameter title: The document's `title` (the application's name, say), if any.
    package func jsonSchema(title: String? = nil) -> Data {
        var root = SchemaNode()
        for (order, setting) in settings.enumerated() {
            let path = setting.components
            guard !path.isEmpty else { continue }
            root.insert((setting, order), at: path[...])
        }
        var document = root.object()
        document["$schema"] = Self.jsonSchemaDialect
        if let title { document["title"] = title }
        document["type"] = "object"
        // Every value put in the document is a JSON type: nothing is left out.
        return Data(Self.integralRealsAsIntegers(JSONValue(jsonObject: document)).jsonText(pretty: true))
    }

    /// `value` with every integral real written as an integer (`2`, not `2.0`), as JSON Schema
    /// documents write their bounds; the reader takes either.
    private static func integralRealsAsIntegers(_ value: JSONValue) -> JSONValue {
        switch value {
        case .double(let real): Int(exactly: real).map(JSONValue.int) ?? value
        case .array(let values): .array(values.map(integralRealsAsIntegers))
        case .object(let members): .object(members.mapValues(integralRealsAsIntegers))
        default: value
        }
    }

    /// The declaration as the text of a JSON Schema document (draft 2020-12), pretty-printed
    /// with sorted keys: what `envctl schema` prints and a package installs as
    /// `/usr/share/NAME/schema.json`; `envctl check --schema` reads it back.
    ///
    /// - Parameter title: The document's `title` (the application's name, say), if any.
    public func jsonSchemaText(title: String? = nil) -> String {
        String(decoding: jsonSchema(title: title), as: UTF8.self)
    }

    /// Reads a declaration from the JSON Schema file at `path` (`envctl --schema`,
    /// `/usr/share/NAME/schema.json`), read as configuration files are: a regular file of at
    /// most 16 MiB (the cap configuration files have), never a FIFO or a device.
    ///
    /// - Throws: ``EnvironmentError`` (`fileUnreadable`, naming the file) when the file cannot
    ///   be read or is too large; ``SettingsSchemaError`` when it is not a declaration.
    package init(jsonSchemaFile path: String) throws {
        try self.init(jsonSchema: PropertyListDocument.readRegularFile(path, expected: "a JSON Schema file"))
    }

    /// Reads a declaration from a JSON Schema document, as ``jsonSchemaText(title:)`` writes it.
    ///
    /// Without our annotations, a setting's type comes from JSON Schema's own words (`type`,
    /// `format`, `contentEncoding`, `items`, `additionalProperties`). Every object schema with
    /// `properties` is a level of keys; a schema with neither `properties` nor anything else
    /// to say is not a setting.
    ///
    /// A type of the application's own (`x-type: custom`) reads back as
    /// ``SettingType/custom(_:)``, which no longer checks values beyond their bounds: the
    /// conversion that did lives in the program.
    package init(jsonSchema data: Data) throws(SettingsSchemaError) {
        let object: Any
        do {
            object = try JSONValue(jsonText: data).jsonObject
        } catch {
            throw SettingsSchemaError("not JSON: \(error.reason)")
        }
        guard let document = object as? [String: Any] else {
            throw SettingsSchemaError("the document is not a JSON object")
        }
        if let dialect = document["$schema"] {
            guard let dialect = dialect as? String, dialect == Self.jsonSchemaDialect else {
                throw SettingsSchemaError(
                    "$schema is \(String(describing: document["$schema"] ?? "")), expected \(Self.jsonSchemaDialect)")
            }
        }
        var declarations: [(order: Int?, declaration: SettingDeclaration)] = []
        try SchemaReader.readLevel(document, path: [], pointer: "", into: &declarations)
        // In the program's order where the document gives it, the others after, by key.
        let ordered = declarations.enumerated().sorted {
            ($0.element.order ?? Int.max, $0.offset) < ($1.element.order ?? Int.max, $1.offset)
        }
        self.init(ordered.map(\.element.declaration))
    }
}

/// One level of the schema being written: a declared setting's schema, levels below it, or both.
private struct SchemaNode {
    var setting: (declaration: SettingDeclaration, order: Int)?
    var children: [String: SchemaNode] = [:]
    /// The children a setting at or below which is required in every environment.
    var requiredChildren: [String] = []

    mutating func insert(_ setting: (SettingDeclaration, Int), at path: ArraySlice<String>) {
        guard let first = path.first else {
            self.setting = setting
            return
        }
        children[first, default: SchemaNode()].insert(setting, at: path.dropFirst())
        if children[first]?.isRequiredEverywhere == true, !requiredChildren.contains(first) {
            requiredChildren.append(first)
        }
    }

    /// Whether a setting at or below this level is required in every environment.
    var isRequiredEverywhere: Bool {
        if let requirement = setting?.declaration.requirement, requirement.isRequired, requirement.environments == nil {
            return true
        }
        return children.values.contains { $0.isRequiredEverywhere }
    }

    func object() -> [String: Any] {
        var schema: [String: Any] = [:]
        if let setting {
            schema = SchemaWriter.schema(for: setting.declaration)
            schema["x-order"] = setting.order
        }
        if !children.isEmpty {
            var properties: [String: Any] = [:]
            for (name, child) in children { properties[name] = child.object() }
            schema["properties"] = properties
            if schema["type"] == nil { schema["type"] = "object" }
            if !requiredChildren.isEmpty { schema["required"] = requiredChildren.sorted() }
        }
        return schema
    }
}

private enum SchemaWriter {
    static func schema(for setting: SettingDeclaration) -> [String: Any] {
        var schema = self.schema(for: setting.type, bounds: setting.bounds)
        if !setting.summary.isEmpty { schema["description"] = setting.summary }
        if let value = setting.defaultValue { schema["default"] = json(value) }
        if setting.isSecret { schema["x-secret"] = true }
        if setting.isRestartOnly { schema["x-restart-only"] = true }
        if !setting.formerNames.isEmpty { schema["x-former-names"] = setting.formerNames }
        if setting.requirement.isRequired, let environments = setting.requirement.environments {
            schema["x-required-in"] = environments.sorted()
        }
        return schema
    }

    /// The schema of a value of `type`; for an array or a map, `bounds` go to its elements.
    static func schema(for type: SettingType, bounds: SettingBounds) -> [String: Any] {
        var schema: [String: Any] = [:]
        switch type {
        case .array(let element):
            schema["type"] = "array"
            schema["items"] = self.schema(for: element, bounds: bounds)
            schema["x-type"] = "array"
            return schema
        case .map(let element):
            schema["type"] = "object"
            schema["additionalProperties"] = self.schema(for: element, bounds: bounds)
            schema["x-type"] = "map"
            return schema
        case .string: schema["type"] = "string"
        case .integer: schema["type"] = "integer"
        case .real: schema["type"] = "number"
        case .boolean: schema["type"] = "boolean"
        case .url:
            schema["type"] = "string"
            schema["format"] = "uri"
        case .duration:
            schema["type"] = ["string", "number"]
            schema["pattern"] = SettingsDeclaration.durationPattern
        case .date:
            schema["type"] = "string"
            schema["format"] = "date-time"
        case .data:
            schema["type"] = "string"
            schema["contentEncoding"] = "base64"
        case .section: schema["type"] = "object"
        case .any: break
        case .custom(let name): schema["x-swift-type"] = name
        }
        schema["x-type"] = typeWord(type)
        if let minimum = bounds.minimum { schema["minimum"] = number(minimum) }
        if let maximum = bounds.maximum { schema["maximum"] = number(maximum) }
        if let range = bounds.rangeDescription { schema["x-range"] = range }
        if !bounds.allowedValues.isEmpty { schema["enum"] = bounds.allowedValues.map(json) }
        if let pattern = bounds.pattern {
            if schema["pattern"] == nil {
                schema["pattern"] = "^(?:\(pattern))$"
            } else {
                schema["allOf"] = [["pattern": "^(?:\(pattern))$"]]
            }
        }
        if !bounds.urlSchemes.isEmpty { schema["x-url-schemes"] = bounds.urlSchemes }
        return schema
    }

    static func typeWord(_ type: SettingType) -> String {
        switch type {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .boolean: "boolean"
        case .url: "url"
        case .duration: "duration"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .map: "map"
        case .section: "section"
        case .any: "any"
        case .custom: "custom"
        }
    }

    /// An integral number as an integer (`1`, not `1.0`).
    static func number(_ value: Double) -> Any {
        if value.rounded() == value, abs(value) < 9e15 { return Int(value) }
        return value
    }

    /// A value as JSON: dates in ISO 8601, data in base64.
    static func json(_ value: SettingValue) -> Any {
        switch value {
        case .string(let text): text
        case .integer(let integer): integer
        case .real(let real): real.isFinite ? real : String(real)
        case .bool(let bool): bool
        case .date(let date): date.formatted(.iso8601)
        case .data(let data): data.base64EncodedString()
        case .array(let elements): elements.map(json)
        case .dictionary(let entries): entries.mapValues(json)
        }
    }
}

private enum SchemaReader {
    /// Reads the settings of an object schema's `properties`, below `path`.
    static func readLevel(
        _ schema: [String: Any], path: [String], pointer: String,
        into declarations: inout [(order: Int?, declaration: SettingDeclaration)]
    ) throws(SettingsSchemaError) {
        guard let properties = schema["properties"] else { return }
        guard let properties = properties as? [String: Any] else {
            throw SettingsSchemaError("properties is not an object", at: pointer)
        }
        let requiredHere: Set<String>
        if let list = schema["required"] {
            guard let names = list as? [String] else {
                throw SettingsSchemaError("required is not an array of strings", at: pointer)
            }
            requiredHere = Set(names)
        } else {
            requiredHere = []
        }
        for name in properties.keys.sorted() {
            let childPointer = pointer + "/properties/" + escaped(name)
            guard let child = properties[name] as? [String: Any] else {
                if properties[name] as? Bool == true { continue }
                throw SettingsSchemaError("not a schema object", at: childPointer)
            }
            let childPath = path + [name]
            if isSetting(child) {
                let setting = try declaration(
                    child, key: SettingPath.text(of: childPath), required: requiredHere.contains(name),
                    pointer: childPointer)
                declarations.append((JSONValue.integer(child["x-order"]), setting))
            }
            try readLevel(child, path: childPath, pointer: childPointer, into: &declarations)
        }
    }

    /// Whether a schema declares a setting: anything beyond a level of keys (`type: object`
    /// with `properties` and `required`).
    static func isSetting(_ schema: [String: Any]) -> Bool {
        let levelWords: Set<String> = ["properties", "required", "type"]
        if schema["x-type"] != nil { return true }
        if schema["properties"] == nil { return true }
        if let type = schema["type"] as? String, type != "object" { return true }
        return !Set(schema.keys).isSubset(of: levelWords)
    }

    static func declaration(_ schema: [String: Any], key: String, required: Bool, pointer: String)
        throws(SettingsSchemaError) -> SettingDeclaration
    {
        guard (try? SettingPath(parsing: key)) != nil else {
            throw SettingsSchemaError("'\(key)' is not a valid key path", at: pointer)
        }
        let (type, bounds) = try typeAndBounds(schema, pointer: pointer)
        var requirement = SettingRequirement.optional
        if required {
            requirement = .always
        } else if let environments = schema["x-required-in"] {
            guard let names = environments as? [String] else {
                throw SettingsSchemaError("x-required-in is not an array of strings", at: pointer)
            }
            requirement = .in(Set(names))
        }
        var formerNames: [String] = []
        if let names = schema["x-former-names"] {
            guard let list = names as? [String], list.allSatisfy({ (try? SettingPath(parsing: $0)) != nil }) else {
                throw SettingsSchemaError("x-former-names is not an array of key paths", at: pointer)
            }
            formerNames = list
        }
        var defaultValue: SettingValue?
        if let value = schema["default"] {
            guard let converted = settingValue(value, as: type), DeclarationCheck.normalized(converted, type) != nil
            else {
                throw SettingsSchemaError("the default is not \(type.withArticleIfScalar)", at: pointer)
            }
            defaultValue = converted
        }
        return SettingDeclaration(
            key, type: type, default: defaultValue, required: requirement, bounds: bounds,
            secret: try flag(schema, "x-secret", pointer), restartOnly: try flag(schema, "x-restart-only", pointer),
            summary: schema["description"] as? String ?? "", formerNames: formerNames)
    }

    static func flag(_ schema: [String: Any], _ name: String, _ pointer: String) throws(SettingsSchemaError) -> Bool {
        guard let value = schema[name] else { return false }
        guard let flag = JSONValue.boolean(value) else {
            throw SettingsSchemaError("\(name) is not true or false", at: pointer)
        }
        return flag
    }

    /// The type a schema describes, and the bounds on it (or, for an array or a map, on its
    /// elements).
    static func typeAndBounds(_ schema: [String: Any], pointer: String) throws(SettingsSchemaError) -> (
        SettingType, SettingBounds
    ) {
        let word = schema["x-type"] as? String ?? inferredWord(schema)
        switch word {
        case "array":
            let items = schema["items"] as? [String: Any] ?? [:]
            let (element, bounds) = try typeAndBounds(items, pointer: pointer + "/items")
            return (.array(element), bounds)
        case "map":
            let values = schema["additionalProperties"] as? [String: Any] ?? [:]
            let (element, bounds) = try typeAndBounds(values, pointer: pointer + "/additionalProperties")
            return (.map(element), bounds)
        default: break
        }
        let type: SettingType
        switch word {
        case "string": type = .string
        case "integer": type = .integer
        case "real": type = .real
        case "boolean": type = .boolean
        case "url": type = .url
        case "duration": type = .duration
        case "date": type = .date
        case "data": type = .data
        case "section": type = .section
        case "any": type = .any
        case "custom": type = .custom(schema["x-swift-type"] as? String ?? "custom")
        default: throw SettingsSchemaError("unknown x-type '\(word)'", at: pointer)
        }
        var bounds = SettingBounds()
        bounds.minimum = try number(schema["minimum"], "minimum", pointer)
        bounds.maximum = try number(schema["maximum"], "maximum", pointer)
        bounds.rangeDescription = schema["x-range"] as? String
        if let values = schema["enum"] {
            guard let list = values as? [Any] else { throw SettingsSchemaError("enum is not an array", at: pointer) }
            bounds.allowedValues = try list.map { (value: Any) throws(SettingsSchemaError) -> SettingValue in
                guard let converted = settingValue(value, as: type), DeclarationCheck.normalized(converted, type) != nil
                else {
                    throw SettingsSchemaError("an enum value is not \(type.withArticleIfScalar)", at: pointer)
                }
                return converted
            }
        }
        var patterns: [String] = []
        if let pattern = schema["pattern"] as? String { patterns.append(pattern) }
        for part in schema["allOf"] as? [[String: Any]] ?? [] {
            if let pattern = part["pattern"] as? String { patterns.append(pattern) }
        }
        patterns.removeAll { type == .duration && $0 == SettingsDeclaration.durationPattern }
        if let pattern = patterns.first { bounds.pattern = unanchored(pattern) }
        if let schemes = schema["x-url-schemes"] {
            guard let list = schemes as? [String] else {
                throw SettingsSchemaError("x-url-schemes is not an array of strings", at: pointer)
            }
            bounds.urlSchemes = list
        }
        return (type, bounds)
    }

    /// The type word a schema without `x-type` describes, from JSON Schema's own words.
    static func inferredWord(_ schema: [String: Any]) -> String {
        var types: Set<String> = []
        if let type = schema["type"] as? String { types = [type] }
        if let list = schema["type"] as? [String] { types = Set(list) }
        if types == ["string", "number"], schema["pattern"] as? String == SettingsDeclaration.durationPattern {
            return "duration"
        }
        guard types.count == 1, let type = types.first else { return "any" }
        switch type {
        case "string":
            switch schema["format"] as? String {
            case "uri", "url", "iri": return "url"
            case "date-time": return "date"
            default: return schema["contentEncoding"] as? String == "base64" ? "data" : "string"
            }
        case "integer": return "integer"
        case "number": return "real"
        case "boolean": return "boolean"
        case "array": return "array"
        case "object": return schema["additionalProperties"] is [String: Any] ? "map" : "section"
        default: return "any"
        }
    }

    /// `^(?:P)$` as `P`; another pattern, which matches anywhere, as `.*(?:P).*`.
    static func unanchored(_ pattern: String) -> String {
        if pattern.hasPrefix("^(?:"), pattern.hasSuffix(")$") {
            return String(pattern.dropFirst(4).dropLast(2))
        }
        var result = pattern
        if result.hasPrefix("^") { result.removeFirst() } else { result = ".*" + result }
        if result.hasSuffix("$") && !result.hasSuffix("\\$") { result.removeLast() } else { result += ".*" }
        return "(?:\(result))"
    }

    static func number(_ value: Any?, _ name: String, _ pointer: String) throws(SettingsSchemaError) -> Double? {
        guard let value else { return nil }
        guard let number = JSONValue.number(value) else {
            throw SettingsSchemaError("\(name) is not a number", at: pointer)
        }
        return number
    }

    /// A JSON value as a setting of `type`: the inverse of ``SchemaWriter/json(_:)``.
    static func settingValue(_ value: Any, as type: SettingType) -> SettingValue? {
        switch type {
        case .date:
            guard let text = value as? String else { return nil }
            return (try? Date(text, strategy: .iso8601)).map(SettingValue.date)
        case .data:
            guard let text = value as? String else { return nil }
            return Data(base64Encoded: text).map(SettingValue.data)
        case .array(let element):
            guard let list = value as? [Any] else { return nil }
            var values: [SettingValue] = []
            for item in list {
                guard let converted = settingValue(item, as: element) else { return nil }
                values.append(converted)
            }
            return .array(values)
        case .map(let element):
            guard let entries = value as? [String: Any] else { return nil }
            var values: [String: SettingValue] = [:]
            for (key, item) in entries {
                guard let converted = settingValue(item, as: element) else { return nil }
                values[key] = converted
            }
            return .dictionary(values)
        case .integer:
            guard let double = JSONValue.number(value) else { return plain(value) }
            if double.rounded() == double, abs(double) < 9.2e18 { return .integer(Int(double)) }
            return .real(double)
        case .real:
            guard let double = JSONValue.number(value) else { return plain(value) }
            return .real(double)
        default:
            return plain(value)
        }
    }

    /// A JSON value as the setting value of its own JSON type.
    static func plain(_ value: Any) -> SettingValue? {
        switch value {
        case let text as String: return .string(text)
        case let flag as Bool where type(of: value) == Bool.self: return .bool(flag)
        case let integer as Int where type(of: value) == Int.self: return .integer(integer)
        case let real as Double where type(of: value) == Double.self: return .real(real)
        case let list as [Any]:
            var values: [SettingValue] = []
            for item in list {
                guard let converted = plain(item) else { return nil }
                values.append(converted)
            }
            return .array(values)
        case let entries as [String: Any]:
            var values: [String: SettingValue] = [:]
            for (key, item) in entries {
                guard let converted = plain(item) else { return nil }
                values[key] = converted
            }
            return .dictionary(values)
        default: return nil
        }
    }

    /// A property name in a JSON pointer (RFC 6901).
    static func escaped(_ name: String) -> String {
        name.replacingEvery("~", with: "~0").replacingEvery("/", with: "~1")
    }
}
