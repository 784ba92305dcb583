package import JSONText

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A varlink method call: `{"method": "interface.Method", "parameters": {...}}`.
///
/// See <https://varlink.org/Method-Call>. Messages travel over a unix stream socket as JSON
/// objects, each followed by a NUL byte.
package struct VarlinkCall: Codable, Sendable, Hashable {
    /// The fully qualified method name, `interface.Method`.
    package var method: String
    /// The call's input parameters.
    package var parameters: [String: JSONValue]?
    /// The caller wants no reply.
    package var oneway: Bool?
    /// The caller accepts several replies (`continues`).
    package var more: Bool?
    /// The caller wants to switch protocols after the reply.
    package var upgrade: Bool?

    package init(method: String, parameters: [String: JSONValue]? = nil, more: Bool? = nil) {
        self.method = method
        self.parameters = parameters
        self.more = more
    }

    /// The interface part of ``method``, or `nil` if it has none.
    package var interface: String? {
        guard let dot = method.lastIndex(of: ".") else { return nil }
        return String(method[..<dot])
    }
}

/// A varlink reply: output parameters, or an error with its parameters.
package struct VarlinkReply: Codable, Sendable, Hashable {
    /// The output parameters, or the error's parameters.
    package var parameters: [String: JSONValue]?
    /// More replies follow.
    package var continues: Bool?
    /// The fully qualified error name, for a failed call.
    package var error: String?

    package init(parameters: [String: JSONValue]? = nil, error: String? = nil) {
        self.parameters = parameters
        self.error = error
    }

    /// A failed call's reply.
    package static func error(_ name: String, _ parameters: [String: JSONValue] = [:]) -> VarlinkReply {
        VarlinkReply(parameters: parameters, error: name)
    }

    /// An error reply of `org.varlink.service` with `parameters`.
    package static func error(_ error: VarlinkServiceError, _ parameters: [String: JSONValue] = [:]) -> VarlinkReply {
        VarlinkReply(parameters: parameters, error: error.qualifiedName)
    }
}

/// Encodes and decodes messages: UTF-8 JSON objects without NUL bytes, each followed by NUL.
package enum VarlinkCoding {
    /// Decodes one message (without its terminating NUL).
    package static func decode<Message: Decodable>(_ type: Message.Type, from bytes: some Collection<UInt8>) throws
        -> Message
    {
        try JSONDecoder().decode(Message.self, from: Data(bytes))
    }

    /// Encodes a message and its terminating NUL.
    package static func encode(_ message: some Encodable) throws -> [UInt8] {
        var bytes = try JSONValueEncoder().encode(message).jsonText()
        bytes.append(0)
        return bytes
    }
}

/// Splits a byte stream into NUL-terminated messages, refusing any larger than a limit, so
/// that a peer cannot make the reader's buffer grow without bound.
package struct VarlinkFramer: Sendable {
    /// What the bytes so far hold.
    package enum Frame: Sendable, Hashable {
        /// A complete message, without its NUL.
        case message([UInt8])
        /// A message (complete or not) longer than the limit: the stream cannot be trusted.
        case tooLarge
    }

    /// The largest message accepted, in bytes, without its NUL.
    package let maximumMessageSize: Int
    private var buffer: [UInt8] = []

    package init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Bytes received but not yet part of a complete message.
    package var pendingByteCount: Int { buffer.count }

    /// Adds received bytes and returns the messages they complete, in order. A
    /// ``Frame/tooLarge`` is always the last frame returned: nothing after it is read.
    package mutating func append(_ bytes: some Collection<UInt8>) -> [Frame] {
        var frames: [Frame] = []
        for byte in bytes {
            if byte == 0 {
                frames.append(.message(buffer))
                buffer.removeAll(keepingCapacity: true)
            } else {
                guard buffer.count < maximumMessageSize else {
                    buffer.removeAll()
                    frames.append(.tooLarge)
                    return frames
                }
                buffer.append(byte)
            }
        }
        return frames
    }
}
