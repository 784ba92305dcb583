/// Escapes the characters that must never reach a terminal, a log line or a journal stream
/// raw: what a configuration key or value could use to drive a terminal (ESC, BEL), to
/// overwrite or forge a line (CR, LF, other line breaks), to end a record early (NUL) or to
/// reorder what a reader sees (bidirectional overrides).
///
/// The escapes are Swift's string-literal escapes, so `"a\u{1B}b"` prints as `a\u{1B}b`:
///
/// | Character | Written as |
/// |---|---|
/// | NUL, TAB, LF, CR | `\0`, `\t`, `\n`, `\r` |
/// | other C0 controls (U+0001–U+001F), DEL (U+007F), C1 controls (U+0080–U+009F) | `\u{1B}`, `\u{7F}`, `\u{9B}` (upper-case hex, no padding) |
/// | line and paragraph separators U+2028, U+2029 | `\u{2028}`, `\u{2029}` |
/// | bidirectional embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069 | `\u{202E}` ... |
///
/// Everything else, the backslash included, is written as it is: the text is for reading, not
/// for parsing back (`--json` outputs carry exact values), and escaping is idempotent, so text
/// escaped twice reads the same as text escaped once.
package enum ControlCharacters {
    /// Whether `scalar` is written as an escape.
    @inline(__always)
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        if value < 0x2028 { return false }
        return value == 0x2028 || value == 0x2029 || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }

    /// Whether any character of `text` needs escaping: a fast check over the UTF-8 bytes.
    package static func needsEscaping(in text: String) -> Bool {
        for byte in text.utf8 {
            // Bytes below 0x20 and DEL are controls; C1 controls are C2 80...C2 9F; the
            // separators and bidirectional controls start with E2.
            if byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xE2 {
                return text.unicodeScalars.contains { needsEscaping($0) }
            }
        }
        return false
    }

    /// `text` with every control character escaped.
    package static func escaped(_ text: String) -> String {
        guard needsEscaping(in: text) else { return text }
        var output = ""
        output.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if needsEscaping(scalar) {
                output += escape(scalar)
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// `text` with every control character escaped except line feeds (and the carriage return
    /// of a CRLF), for text that may span lines and is split at them by its writer.
    package static func escapedKeepingLineFeeds(_ text: String) -> String {
        guard needsEscaping(in: text) else { return text }
        var output = ""
        output.reserveCapacity(text.utf8.count + 16)
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            if scalar == "\n" || (scalar == "\r" && pending == "\n") {
                output.unicodeScalars.append(scalar)
            } else if needsEscaping(scalar) {
                output += escape(scalar)
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }

    /// The escape for one character that needs one.
    package static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\0": return "\\0"
        case "\t": return "\\t"
        case "\n": return "\\n"
        case "\r": return "\\r"
        default: return "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }

    /// JSON text with the characters that JSON allows raw but a terminal may act on (DEL, C1
    /// controls, separators, bidirectional controls) written as `\uXXXX` escapes. JSON has
    /// them only inside strings, where the escape means the same character, so the result
    /// decodes to the same values. JSON already escapes C0 controls (U+0000–U+001F).
    package static func escapedJSON(_ json: String) -> String {
        guard needsEscaping(in: json) else { return json }
        var output = ""
        output.reserveCapacity(json.utf8.count + 16)
        for scalar in json.unicodeScalars {
            // Line feeds and indentation between members stay: JSON escapes C0 in strings.
            if scalar.value >= 0x7F && needsEscaping(scalar) {
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
