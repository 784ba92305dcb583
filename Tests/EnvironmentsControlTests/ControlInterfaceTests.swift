import Environments
import EnvironmentsControl
import Foundation
import JSONText
import Testing
import Varlink

/// The interface text that the daemon serves (`ControlInterface.description`) against the
/// records that travel on the socket: each record has exactly the fields of the type it stands
/// for, with the type, the optionality and the enum values the text gives them.
///
/// For each record: a JSON object is made from the text (every field, then each optional field
/// left out, then each required one left out) and decoded into the record. Every version with
/// the required fields must decode, and encode back to the same object; one without a required
/// field must not decode; and the record's stored properties must be the text's fields. A
/// reload's forms (`ReloadVerdict`, `HistoryEntry`) are encodings of the one `ReloadReport`,
/// which holds more than either: they are held to the same round trips, and
/// `ReloadReportSurfaceTests` says which of the report's fields each carries.
@Suite("the control interface's text and its records")
struct ControlInterfaceTests {
    /// A record (or a form of `ReloadReport`) and the part of the interface it stands for.
    struct Mapping: Sendable, CustomTestStringConvertible {
        /// `type NAME`, or a method's output.
        var part: String
        var name: String
        /// Reads an object of the part.
        var decode: @Sendable ([String: JSONValue]) throws -> Any
        /// Writes what ``decode`` read back as an object.
        var encode: @Sendable (Any) throws -> [String: JSONValue]
        /// Whether the value's stored properties must be the part's fields (a record's; not the
        /// report's, of which a form carries some fields).
        var propertiesAreFields: Bool
        /// The record's own JSON writer, where it has one beside `JSONValueEncoder`.
        var handWritten: (@Sendable (Any) -> JSONValue?)?

        var testDescription: String { "\(part): \(name)" }

        init<Record: Codable & Sendable>(
            _ part: String, _ record: Record.Type, handWritten: (@Sendable (Any) -> JSONValue?)? = nil
        ) {
            self.part = part
            name = "\(record)"
            decode = { try JSONValue.record(Record.self, from: $0) }
            encode = { try JSONValue.parameters(of: $0 as! Record) }
            propertiesAreFields = true
            self.handWritten = handWritten
        }

        /// A form of `ReloadReport`: `decode` reads it, `encode` writes it.
        init(
            _ part: String, report decode: @escaping @Sendable ([String: JSONValue]) throws -> ReloadReport,
            encode: @escaping @Sendable (ReloadReport) -> [String: JSONValue]
        ) {
            self.part = part
            name = "ReloadReport"
            self.decode = decode
            self.encode = { encode($0 as! ReloadReport) }
            propertiesAreFields = false
            handWritten = nil
        }
    }

    static let mappings: [Mapping] = [
        Mapping("type Source", SourceRecord.self, handWritten: { ($0 as? SourceRecord)?.jsonValue }),
        Mapping("type Setting", SettingRecord.self, handWritten: { ($0 as? SettingRecord)?.jsonValue }),
        Mapping(
            "type PendingRestart", PendingRestartRecord.self, handWritten: { ($0 as? PendingRestartRecord)?.jsonValue }),
        Mapping("type ConfigurationError", ConfigurationErrorRecord.self),
        Mapping("type ReloadVerdict", report: { try ReloadReport(verdict: $0) }, encode: \.verdictJSON),
        Mapping("type LogLevelOverride", LogLevelOverrideRecord.self),
        Mapping("type Candidate", CheckCandidate.self),
        Mapping("type SettingChange", SettingChangeRecord.self),
        Mapping("type HistoryEntry", report: { try ReloadReport(historyEntry: $0) }, encode: \.historyJSON),
        Mapping("Describe ->", DescribeReply.self),
        Mapping("Check ->", CheckReply.self),
        Mapping("History ->", HistoryReply.self),
        Mapping("Schema ->", SchemaReply.self),
    ]

    /// Methods whose output no record describes: their handlers build the parameters member by
    /// member (Get: `setting`, `restartOnly`, `pendingRestart`; Reload: `verdict`, a
    /// `ReloadReport`'s `verdictJSON`).
    static let outputsWithoutRecord: Set<String> = ["Get", "Reload"]

    static func interface() throws -> InterfaceDefinition { try InterfaceDefinition(ControlInterface.description) }

    @Test("the text parses, and names the interface, its methods and its errors as the constants do")
    func namesMatchTheConstants() throws {
        let interface = try Self.interface()
        #expect(interface.name == ControlInterface.name)
        #expect(
            Set(ControlInterface.Method.allCases.map(\.qualifiedName))
                == Set(interface.methods.keys.map { "\(ControlInterface.name).\($0)" }))
        #expect(
            Set(ControlInterface.Error.allCases.map(\.qualifiedName))
                == Set(interface.errors.keys.map { "\(ControlInterface.name).\($0)" }))
        #expect(ControlInterface.Method.get.qualifiedName == "io.swiftenvironments.Configuration.Get")
        #expect(VarlinkServiceError.invalidParameter.qualifiedName == "org.varlink.service.InvalidParameter")
    }

    @Test("every type of the text, and every method's output, has a record (or is listed as built by hand)")
    func everyPartHasARecord() throws {
        let interface = try Self.interface()
        let mapped = Set(Self.mappings.map(\.part))
        for name in interface.types.keys.sorted() {
            #expect(mapped.contains("type \(name)"), "the interface's type \(name) has no record here")
        }
        for name in interface.methods.keys.sorted() where !Self.outputsWithoutRecord.contains(name) {
            #expect(mapped.contains("\(name) ->"), "the output of \(name) has no record here")
        }
        for part in mapped {
            let exists =
                part.hasPrefix("type ")
                ? interface.types[String(part.dropFirst("type ".count))] != nil
                : interface.methods[String(part.dropLast(" ->".count))] != nil
            #expect(exists, "\(part) is not in the interface's text")
        }
    }

    @Test("each record has the fields of its part of the text, with their types", arguments: mappings)
    func recordMatchesTheText(_ mapping: Mapping) throws {
        let interface = try Self.interface()
        let fields = try Self.fields(of: mapping.part, in: interface)
        try Self.check(mapping, fields: fields, interface: interface)
    }

    private static func fields(of part: String, in interface: InterfaceDefinition) throws -> [InterfaceDefinition.Field]
    {
        if part.hasPrefix("type ") {
            guard case .structure(let fields) = interface.types[String(part.dropFirst("type ".count))] else {
                throw InterfaceDefinition.Failure(description: "\(part) is not a struct in the interface's text")
            }
            return fields
        }
        guard let method = interface.methods[String(part.dropLast(" ->".count))] else {
            throw InterfaceDefinition.Failure(description: "\(part) is not in the interface's text")
        }
        return method.output
    }

    private static func check(
        _ mapping: Mapping, fields: [InterfaceDefinition.Field], interface: InterfaceDefinition
    ) throws {
        // The record's stored properties are the fields (a property the text lacks, even an
        // optional one that a decode leaves nil, is a difference).
        let full = try sample(fields, variant: 0, interface)
        if mapping.propertiesAreFields {
            let decoded = try mapping.decode(full)
            let properties = Set(Mirror(reflecting: decoded).children.compactMap(\.label))
            let names = Set(fields.map(\.name))
            #expect(
                properties == names,
                "\(mapping.name) has \(properties.subtracting(names).sorted()) beyond the text, lacks \(names.subtracting(properties).sorted())"
            )
        }
        // Every field present, once for each value of the enums among them.
        let variants = max(1, fields.map { enumerationCount($0.type, interface) }.max() ?? 1)
        for variant in 0..<variants {
            let object = try sample(fields, variant: variant, interface)
            try roundTrip(mapping, object)
        }
        // Each field left out: an optional one must decode without it, a required one must not.
        for field in fields {
            var object = full
            object[field.name] = nil
            if case .optional = field.type {
                try roundTrip(mapping, object)
            } else {
                #expect(
                    throws: (any Error).self, "\(mapping.name) decodes without \(field.name), which the text requires"
                ) {
                    try mapping.decode(object)
                }
            }
        }
    }

    /// Decodes `object` and checks that it encodes back to `object`.
    private static func roundTrip(_ mapping: Mapping, _ object: [String: JSONValue]) throws {
        let decoded = try mapping.decode(object)
        let encoded = try mapping.encode(decoded)
        #expect(encoded == object, "\(mapping.name) read \(object) and wrote \(encoded)")
        if let handWritten = mapping.handWritten {
            #expect(
                handWritten(decoded) == .object(object), "\(mapping.name).jsonValue differs from JSONValueEncoder's")
        }
    }

    /// Samples for string fields whose text has a form of its own: a history entry's `time`.
    private static let formattedStrings: [String: @Sendable (Int) -> String] = [
        "time": { "2026-11-28T22:00:0\($0 % 10).000Z" }
    ]

    /// A JSON object with every field of `fields`, each a value of its type.
    private static func sample(
        _ fields: [InterfaceDefinition.Field], variant: Int, _ interface: InterfaceDefinition
    ) throws -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        for field in fields {
            if let formatted = formattedStrings[field.name] {
                object[field.name] = .string(formatted(variant))
            } else {
                object[field.name] = try sample(field.type, variant: variant, interface)
            }
        }
        return object
    }

    private static func sample(
        _ type: InterfaceDefinition.FieldType, variant: Int, _ interface: InterfaceDefinition
    ) throws -> JSONValue {
        switch type {
        case .string: return .string("text \(variant)")
        case .int: return .int(7 + variant)
        case .float: return .double(1.5 + Double(variant))
        case .bool: return .bool(variant % 2 == 0)
        case .object: return .object(["member": .int(1)])
        case .optional(let type): return try sample(type, variant: variant, interface)
        case .array(let type): return .array([try sample(type, variant: variant, interface)])
        case .map(let type): return .object(["key": try sample(type, variant: variant, interface)])
        case .enumeration(let values): return .string(values[variant % values.count])
        case .structure(let fields): return .object(try sample(fields, variant: variant, interface))
        case .named(let name):
            guard let type = interface.types[name] else {
                throw InterfaceDefinition.Failure(description: "the text uses the type \(name) and does not define it")
            }
            return try sample(type, variant: variant, interface)
        }
    }

    /// How many values the enum with the most has, among `type` and what it holds.
    private static func enumerationCount(_ type: InterfaceDefinition.FieldType, _ interface: InterfaceDefinition) -> Int
    {
        switch type {
        case .enumeration(let values): values.count
        case .optional(let type), .array(let type), .map(let type): enumerationCount(type, interface)
        case .structure(let fields): fields.map { enumerationCount($0.type, interface) }.max() ?? 1
        case .named(let name): interface.types[name].map { enumerationCount($0, interface) } ?? 1
        default: 1
        }
    }
}
