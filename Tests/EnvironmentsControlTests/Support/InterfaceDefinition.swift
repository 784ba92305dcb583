/// A varlink interface description (<https://varlink.org/Interface-Definition>), read as far as
/// the control interface uses the language: comments, `type`, `method` and `error`, structs,
/// enums, `?`, `[]`, `[string]` and the five basic types.
struct InterfaceDefinition {
    /// A field's type.
    indirect enum FieldType: Equatable, CustomStringConvertible {
        case string, int, float, bool, object
        case named(String)
        case optional(FieldType)
        case array(FieldType)
        case map(FieldType)
        case enumeration([String])
        case structure([Field])

        var description: String {
            switch self {
            case .string: "string"
            case .int: "int"
            case .float: "float"
            case .bool: "bool"
            case .object: "object"
            case .named(let name): name
            case .optional(let type): "?\(type)"
            case .array(let type): "[]\(type)"
            case .map(let type): "[string]\(type)"
            case .enumeration(let values): "(\(values.joined(separator: ", ")))"
            case .structure(let fields): "(\(fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ")))"
            }
        }
    }

    /// One field of a struct.
    struct Field: Equatable {
        var name: String
        var type: FieldType
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The interface's name.
    private(set) var name = ""
    /// `type NAME (...)`, by name.
    private(set) var types: [String: FieldType] = [:]
    /// `method NAME (...) -> (...)`, by name.
    private(set) var methods: [String: (input: [Field], output: [Field])] = [:]
    /// `error NAME (...)`, by name.
    private(set) var errors: [String: [Field]] = [:]

    private var tokens: [String]
    private var position = 0

    init(_ text: String) throws {
        tokens = Self.tokens(of: text)
        guard next() == "interface" else { throw Failure(description: "no 'interface' first") }
        name = try identifier()
        while let keyword = next() {
            switch keyword {
            case "type":
                let name = try identifier()
                types[name] = try parenthesised()
            case "method":
                let name = try identifier()
                let input = try structure()
                try expect("->")
                methods[name] = (input, try structure())
            case "error":
                let name = try identifier()
                errors[name] = try structure()
            default:
                throw Failure(description: "unexpected '\(keyword)' at the top level")
            }
        }
    }

    /// Words and punctuation, without comments and white space.
    private static func tokens(of text: String) -> [String] {
        var tokens: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var word = ""
            func flush() {
                if !word.isEmpty { tokens.append(word) }
                word = ""
            }
            var characters = line.prefix { $0 != "#" }[...]
            while let character = characters.popFirst() {
                if character.isLetter || character.isNumber || character == "_" || character == "." {
                    word.append(character)
                } else {
                    flush()
                    if character == "-", characters.first == ">" {
                        characters.removeFirst()
                        tokens.append("->")
                    } else if !character.isWhitespace {
                        tokens.append(String(character))
                    }
                }
            }
            flush()
        }
        return tokens
    }

    private mutating func next() -> String? {
        guard position < tokens.count else { return nil }
        defer { position += 1 }
        return tokens[position]
    }

    private func peek(_ offset: Int = 0) -> String? {
        position + offset < tokens.count ? tokens[position + offset] : nil
    }

    private mutating func expect(_ token: String) throws {
        let found = next()
        guard found == token else { throw Failure(description: "expected '\(token)', found '\(found ?? "the end")'") }
    }

    private mutating func identifier() throws -> String {
        guard let word = next(), let first = word.first, first.isLetter else {
            throw Failure(description: "expected a name at token \(position)")
        }
        return word
    }

    /// `(...)`: a struct (`name: type, ...`, or `()`), or an enum (`name, ...`).
    private mutating func parenthesised() throws -> FieldType {
        if peek(1) == ")" || peek(2) == ":" { return .structure(try structure()) }
        try expect("(")
        var values = [try identifier()]
        while next() == "," { values.append(try identifier()) }
        position -= 1
        try expect(")")
        return .enumeration(values)
    }

    private mutating func structure() throws -> [Field] {
        try expect("(")
        var fields: [Field] = []
        if peek() == ")" {
            position += 1
            return fields
        }
        repeat {
            let name = try identifier()
            try expect(":")
            fields.append(Field(name: name, type: try fieldType()))
        } while next() == ","
        position -= 1
        try expect(")")
        return fields
    }

    private mutating func fieldType() throws -> FieldType {
        switch peek() {
        case "?":
            position += 1
            return .optional(try fieldType())
        case "[":
            position += 1
            if peek() == "]" {
                position += 1
                return .array(try fieldType())
            }
            try expect("string")
            try expect("]")
            return .map(try fieldType())
        case "(":
            return try parenthesised()
        default:
            switch try identifier() {
            case "string": return .string
            case "int": return .int
            case "float": return .float
            case "bool": return .bool
            case "object": return .object
            case let name: return .named(name)
            }
        }
    }
}
