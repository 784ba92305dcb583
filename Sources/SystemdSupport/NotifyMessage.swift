import TextEscaping

/// Builds the text of one `sd_notify` datagram from `NAME=value` assignments.
///
/// Each assignment ends at a newline, so control characters in a value (a newline, a NUL that
/// would end the C string, an ESC that `systemctl status` would pass to a terminal) are
/// escaped as `ControlCharacters` writes them (`\n`, `\0`, `\u{1B}`), and one inside a name
/// becomes `_`. An `=` in a name would move the split point, so it becomes `_` as well.
enum NotifyMessage {
    /// Joins the assignments into newline-separated `NAME=value` lines.
    static func encode(_ assignments: [(String, String)]) -> String {
        assignments
            .map { name, value in "\(sanitize(name: name))=\(sanitize(value: value))" }
            .joined(separator: "\n")
    }

    /// Escapes characters that would end the assignment or the whole message, or reach a
    /// terminal raw.
    static func sanitize(value: String) -> String {
        ControlCharacters.escaped(value)
    }

    private static func sanitize(name: String) -> String {
        String(name.map { isBreaking($0) || $0 == "=" ? "_" : $0 })
    }

    private static func isBreaking(_ character: Character) -> Bool {
        character.isNewline || character == "\0"
    }
}
