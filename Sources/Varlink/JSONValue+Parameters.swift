package import JSONText

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONValue {
    /// A record's members as varlink parameters.
    package static func parameters(of record: some Encodable) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONValueEncoder().encode(record) else {
            throw EncodingError.invalidValue(
                record, .init(codingPath: [], debugDescription: "\(type(of: record)) is not encoded as an object"))
        }
        return members
    }

    /// Varlink parameters decoded into a record.
    package static func record<Record: Decodable>(_ type: Record.Type, from parameters: [String: JSONValue]?) throws
        -> Record
    {
        let data = try JSONEncoder().encode(parameters ?? [:])
        return try JSONDecoder().decode(Record.self, from: data)
    }
}
