// libsystemd and the C library calls made beside it (Sources/CSystemd/shim.h), Linux only.
#if os(Linux)
    import CSystemd
#endif

/// Reads entries from the local journal with `sd-journal(3)`, as `journalctl` does: the files
/// of this machine this user may read (root, and members of `systemd-journal` or `adm`, read
/// the system's; others their own).
package enum JournalReader {
    /// One journal entry: its fields in order (a name may repeat) and when it was written.
    package struct Entry: Sendable, Hashable {
        /// `__REALTIME_TIMESTAMP`: microseconds since the epoch.
        package var realtimeMicroseconds: UInt64
        /// The fields, `NAME` and value, in the entry's order.
        package var fields: [(name: String, value: String)]

        package init(realtimeMicroseconds: UInt64, fields: [(name: String, value: String)]) {
            self.realtimeMicroseconds = realtimeMicroseconds
            self.fields = fields
        }

        /// The values of every field named `name`, in order.
        package func values(_ name: String) -> [String] {
            fields.filter { $0.name == name }.map(\.value)
        }

        /// The first value of the field named `name`.
        package func value(_ name: String) -> String? {
            fields.first { $0.name == name }?.value
        }

        package static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.realtimeMicroseconds == rhs.realtimeMicroseconds
                && lhs.fields.map(\.name) == rhs.fields.map(\.name)
                && lhs.fields.map(\.value) == rhs.fields.map(\.value)
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(realtimeMicroseconds)
            for field in fields {
                hasher.combine(field.name)
                hasher.combine(field.value)
            }
        }
    }

    /// Why the journal could not be read.
    package struct ReadError: Error, CustomStringConvertible, Sendable {
        /// What failed, with the error number's text.
        package var description: String
    }

    /// The largest field value read, in bytes; a longer one is cut there (`sd_journal_set_data_threshold`).
    package static let fieldSizeLimit = 64 << 10

    /// The newest entries that match, oldest first.
    ///
    /// - Parameters:
    ///   - matches: For each field name, the values it may have: an entry matches when each
    ///     named field has one of its values (`journalctl FIELD=a FIELD=b OTHER=c`).
    ///   - limit: How many entries at most (the newest).
    /// - Returns: The entries; none on platforms without sd-journal.
    package static func entries(matching matches: [String: [String]], limit: Int) throws(ReadError) -> [Entry] {
        #if os(Linux)
            var journal: OpaquePointer?
            let opened = sd_journal_open(&journal, Int32(SD_JOURNAL_LOCAL_ONLY))
            guard opened >= 0, let journal else {
                throw ReadError(description: "cannot open the journal: \(String(cString: strerror(-opened)))")
            }
            defer { sd_journal_close(journal) }
            _ = sd_journal_set_data_threshold(journal, fieldSizeLimit)
            for name in matches.keys.sorted() {
                for value in matches[name]! {
                    let match = Array("\(name)=\(value)".utf8)
                    let added = match.withUnsafeBytes { sd_journal_add_match(journal, $0.baseAddress, $0.count) }
                    guard added >= 0 else {
                        throw ReadError(
                            description: "cannot match \(name)=\(value): \(String(cString: strerror(-added)))")
                    }
                }
            }
            guard sd_journal_seek_tail(journal) >= 0 else { return [] }
            var entries: [Entry] = []
            while entries.count < limit, sd_journal_previous(journal) > 0 {
                var realtime: UInt64 = 0
                _ = sd_journal_get_realtime_usec(journal, &realtime)
                var fields: [(name: String, value: String)] = []
                sd_journal_restart_data(journal)
                var data: UnsafeRawPointer?
                var length = 0
                while sd_journal_enumerate_data(journal, &data, &length) > 0, let data {
                    let bytes = UnsafeRawBufferPointer(start: data, count: length)
                    guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else { continue }
                    let name = String(decoding: bytes[..<equals], as: UTF8.self)
                    let value = String(decoding: bytes[(equals + 1)...], as: UTF8.self)
                    fields.append((name, value))
                }
                entries.append(Entry(realtimeMicroseconds: realtime, fields: fields))
            }
            return entries.reversed()
        #else
            return []
        #endif
    }
}
