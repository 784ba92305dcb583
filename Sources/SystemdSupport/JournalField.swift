/// One `NAME=value` field of a journal entry.
///
/// The name is always valid: it passes through ``JournalFieldName/sanitize(_:)`` when the
/// field is created. The value is raw bytes; it may contain newlines, NUL and non-UTF-8
/// data.
package struct JournalField: Sendable, Hashable {
    /// The field name, valid for journald.
    package let name: String

    /// The field value as raw bytes.
    package let value: [UInt8]

    /// Creates a field with a UTF-8 text value.
    ///
    /// - Parameters:
    ///   - name: Any name; it is sanitized with ``JournalFieldName/sanitize(_:)``.
    ///   - value: The value, which may span several lines.
    package init(name: String, value: String) {
        self.init(name: name, bytes: Array(value.utf8))
    }

    /// Creates a field with a binary value.
    ///
    /// - Parameters:
    ///   - name: Any name; it is sanitized with ``JournalFieldName/sanitize(_:)``.
    ///   - bytes: The value's bytes.
    package init(name: String, bytes: [UInt8]) {
        self.name = JournalFieldName.sanitize(name)
        self.value = bytes
    }

    /// The value decoded as UTF-8, with invalid sequences replaced by U+FFFD.
    package var stringValue: String {
        String(decoding: value, as: UTF8.self)
    }
}
