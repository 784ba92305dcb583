/// An ordered list of journal fields, as journald stores one log entry.
///
/// A name may occur more than once (journald keeps every occurrence), for example one
/// `CONFIG_SETTING=Key=value` field per setting.
///
/// ```swift
/// var entry = JournalEntry([("MESSAGE", "Configuration loaded"), ("PRIORITY", "6")])
/// entry.append("CONFIG_SETTING", "LogLevel=debug")
/// entry.append("CONFIG_SETTING", "Port=8080")
/// ```
package struct JournalEntry: Sendable, Hashable {
    /// The fields in the order they are sent.
    package var fields: [JournalField]

    /// Creates an entry from fields.
    ///
    /// - Parameter fields: The fields, in order.
    package init(fields: [JournalField] = []) {
        self.fields = fields
    }

    /// Creates an entry from `(name, value)` pairs; names are sanitized.
    ///
    /// - Parameter pairs: The names and text values, in order.
    package init(_ pairs: [(String, String)]) {
        self.fields = pairs.map { JournalField(name: $0.0, value: $0.1) }
    }

    /// Appends a field with a text value; the name is sanitized.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The value, which may span several lines.
    package mutating func append(_ name: String, _ value: String) {
        fields.append(JournalField(name: name, value: value))
    }

    /// Appends a field with a binary value; the name is sanitized.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - bytes: The value's bytes.
    package mutating func append(_ name: String, bytes: [UInt8]) {
        fields.append(JournalField(name: name, bytes: bytes))
    }

    /// The text values of every field called `name`, in order.
    ///
    /// - Parameter name: A field name, compared after sanitizing.
    package func values(named name: String) -> [String] {
        let name = JournalFieldName.sanitize(name)
        return fields.filter { $0.name == name }.map(\.stringValue)
    }
}
