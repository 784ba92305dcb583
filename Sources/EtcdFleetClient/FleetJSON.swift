#if Fleet
    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// JSON as the fleet's own records are written in etcd (a host's status, a staged publish's
    /// record): sorted keys, slashes unescaped, dates in ISO 8601.
    enum FleetJSON {
        /// `value` as JSON, or `nil` when it cannot be encoded.
        static func encode(_ value: some Encodable) -> Data? {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            return try? encoder.encode(value)
        }

        /// The record `data` holds, or `nil` when it is larger than `maximumBytes` or not one.
        static func decode<Record: Decodable>(_ type: Record.Type, from data: Data, maximumBytes: Int) -> Record? {
            guard data.count <= maximumBytes else { return nil }
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try? decoder.decode(type, from: data)
        }
    }
#endif
