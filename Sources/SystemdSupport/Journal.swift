// libsystemd and the C library calls made beside it (Sources/CSystemd/shim.h), Linux only.
#if os(Linux)
    import CSystemd
#endif

/// Sends entries to the local systemd journal with `sd_journal_sendv(3)`.
///
/// libsystemd encodes values with newlines itself and passes large entries through a
/// memory file. On platforms other than Linux nothing is sent and ``send(_:)-(JournalEntry)``
/// returns `false`.
package enum Journal {
    /// The socket on which journald receives native-protocol entries.
    package static let socketPath = "/run/systemd/journal/socket"

    /// Whether the journal socket exists, so that entries can be delivered.
    ///
    /// libsystemd drops entries silently when the socket is missing; senders that must not
    /// lose entries check this first. Always `false` on platforms other than Linux.
    package static var isAvailable: Bool {
        #if os(Linux)
            return access(socketPath, F_OK) == 0
        #else
            return false
        #endif
    }

    /// Sends one entry.
    ///
    /// - Parameter entry: The entry; names are valid and may repeat.
    /// - Returns: `true` if journald received it; `false` if the journal socket is missing or
    ///   `sd_journal_sendv` failed. An empty entry is not sent and counts as delivered.
    @discardableResult
    package static func send(_ entry: JournalEntry) -> Bool {
        guard !entry.fields.isEmpty else { return true }
        #if os(Linux)
            guard isAvailable else { return false }
            var buffer: [UInt8] = []
            var ranges: [(start: Int, count: Int)] = []
            ranges.reserveCapacity(entry.fields.count)
            for field in entry.fields {
                let start = buffer.count
                buffer.append(contentsOf: field.name.utf8)
                buffer.append(UInt8(ascii: "="))
                buffer.append(contentsOf: field.value)
                ranges.append((start, buffer.count - start))
            }
            let result = buffer.withUnsafeMutableBytes { bytes -> Int32 in
                guard let base = bytes.baseAddress else { return -EINVAL }
                let vectors = ranges.map { iovec(iov_base: base + $0.start, iov_len: $0.count) }
                return vectors.withUnsafeBufferPointer {
                    sd_journal_sendv($0.baseAddress, Int32($0.count))
                }
            }
            return result >= 0
        #else
            return false
        #endif
    }

    /// Sends one entry made of `(name, value)` pairs; names are sanitized.
    ///
    /// - Parameter fields: The names and text values, in order; names may repeat.
    /// - Returns: `true` if journald received the entry.
    @discardableResult
    package static func send(_ fields: [(String, String)]) -> Bool {
        send(JournalEntry(fields))
    }
}
