/// Builds the text of one `sd_notify` datagram from `NAME=value` assignments.
///
/// Each assignment ends at a newline, so a newline (or NUL, which would end the C string)
/// inside a value is replaced by a space, and one inside a name by `_`. An `=` in a name
/// would move the split point, so it becomes `_` as well.
enum NotifyMessage {
    /// Joins the assignments into newline-separated `NAME=value` lines.
    static func encode(_ assignments: [(String, String)]) -> String {
        assignments
            .map { name, value in "\(sanitize(name: name))=\(sanitize(value: value))" }
            .joined(separator: "\n")
    }

    /// Replaces characters that would end the assignment or the whole message.
    static func sanitize(value: String) -> String {
        String(value.map { isBreaking($0) ? " " : $0 })
    }

    private static func sanitize(name: String) -> String {
        String(name.map { isBreaking($0) || $0 == "=" ? "_" : $0 })
    }

    private static func isBreaking(_ character: Character) -> Bool {
        character.isNewline || character == "\0"
    }
}
