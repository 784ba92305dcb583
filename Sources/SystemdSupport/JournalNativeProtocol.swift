/// Encodes journal entries in journald's native protocol, one datagram per entry.
///
/// The format (systemd's "Native Journal Protocol") is a sequence of fields:
/// `NAME=value\n` for a value without newlines, and otherwise `NAME\n`, the value's
/// length as a 64-bit little-endian integer, the value, and `\n`.
package enum JournalNativeProtocol {
    /// Encodes an entry as one datagram.
    ///
    /// - Parameter entry: The entry; its names are already valid.
    /// - Returns: The datagram's bytes.
    package static func encode(_ entry: JournalEntry) -> [UInt8] {
        var datagram: [UInt8] = []
        for field in entry.fields {
            datagram.append(contentsOf: field.name.utf8)
            if field.value.contains(newline) {
                datagram.append(newline)
                withUnsafeBytes(of: UInt64(field.value.count).littleEndian) {
                    datagram.append(contentsOf: $0)
                }
            } else {
                datagram.append(UInt8(ascii: "="))
            }
            datagram.append(contentsOf: field.value)
            datagram.append(newline)
        }
        return datagram
    }

    /// Encodes `(name, value)` pairs as one datagram; names are sanitized.
    ///
    /// - Parameter fields: The names and text values, in order; names may repeat.
    /// - Returns: The datagram's bytes.
    package static func encode(_ fields: [(String, String)]) -> [UInt8] {
        encode(JournalEntry(fields))
    }

    private static let newline = UInt8(ascii: "\n")
}
