import Logging
import TextEscaping

/// Formats log entries as text lines for standard error.
///
/// Text outputs never carry a control character raw: the message and the metadata go through
/// `ControlCharacters` (ESC as `\u{1B}`, NUL as `\0`, CR as `\r`, ...), so no value can drive
/// the terminal, end a record early or forge one.
enum LogLineFormatter {
    /// The longest line ``prefixed(priority:message:metadata:)`` writes, in bytes, its `<N>`
    /// and line feed included: 32 KiB, well below journald's default `LineMax=` of 48 KiB, past
    /// which journald would start a new record with the rest of the line. A longer line is cut
    /// at this length and ends with ``cutMarker(omitting:)``.
    static let maximumLineBytes = 32 * 1024

    /// The text that ends a cut line: ` ...[N more bytes cut]`.
    static func cutMarker(omitting count: Int) -> String { " ...[\(count) more bytes cut]" }

    /// One line for a service's standard error, which journald and syslog parse: `<N>` (the
    /// syslog priority), the message and the metadata.
    ///
    /// `"<3>could not open file path=/etc/x\n"`
    ///
    /// journald's stream reader ends a record at a line feed, at a NUL and after `LineMax=`
    /// bytes, and reads a `<N>` at the start of each record. So that one entry is one record and
    /// no text in it can start a record of its own, with a priority of its choosing or not:
    /// control characters are escaped (line feeds included: a multi-line message is one line
    /// with `\n` in it), the line is at most ``maximumLineBytes``, and a `<` that would read as
    /// a priority prefix (`<` and one to three digits and `>`) anywhere in the text is written
    /// as `\u{3C}`, so that even a journald with a smaller `LineMax=` finds no priority where
    /// it cuts.
    static func prefixed(
        priority: SyslogPriority, message: String, metadata: Logger.Metadata
    ) -> String {
        // A single trailing line break ends the line rather than showing as `\n`.
        var message = Substring(message)
        if message.last == "\n" || message.last == "\r\n" { message.removeLast() }
        var bytes = Array("<\(priority.rawValue)>".utf8)
        bytes += escapingPriorityPrefixes(Array((ControlCharacters.escaped(String(message)) + render(metadata)).utf8))
        bytes.append(UInt8(ascii: "\n"))
        return String(decoding: cut(bytes), as: UTF8.self)
    }

    /// Readable lines: timestamp, level, label, message and metadata. On a terminal, the
    /// continuation lines of a multi-line message are indented; with `oneLinePerEntry` (a file
    /// or a pipe, read line by line), line feeds are escaped as `\n` and the line is cut at
    /// ``maximumLineBytes``, as ``prefixed(priority:message:metadata:)`` does.
    ///
    /// `"2025-01-31T14:05:09.123+0100 info daemon: reloaded generation=3\n"`
    static func plain(
        timestamp: String, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata, oneLinePerEntry: Bool = false
    ) -> String {
        let header =
            "\(timestamp) \(level)\(label.isEmpty ? "" : " \(ControlCharacters.escaped(label))"): "
        if oneLinePerEntry {
            var message = Substring(message)
            if message.last == "\n" || message.last == "\r\n" { message.removeLast() }
            let line = header + ControlCharacters.escaped(String(message)) + render(metadata) + "\n"
            return String(decoding: cut(Array(line.utf8)), as: UTF8.self)
        }
        let lines = self.lines(of: message, metadata: metadata)
        var text = header + lines[0] + "\n"
        for line in lines.dropFirst() {
            text += continuationIndent + line + "\n"
        }
        return text
    }

    /// The metadata as ` key=value` pairs sorted by key, or an empty string; control
    /// characters (line feeds included) in keys and values are escaped.
    static func render(_ metadata: Logger.Metadata) -> String {
        metadata.sorted { $0.key < $1.key }.map {
            " \(ControlCharacters.escaped($0.key))=\(ControlCharacters.escaped($0.value.description))"
        }.joined()
    }

    /// The indentation of a multi-line message's continuation lines on a terminal.
    static let continuationIndent = "    "

    /// The message split at its line feeds (a CRLF counts as one; a single trailing one adds
    /// no empty line), every other control character escaped, and the metadata on the last
    /// line: on a terminal, continuation lines are indented, so none reads as an entry.
    private static func lines(of message: String, metadata: Logger.Metadata) -> [String] {
        let text = ControlCharacters.escapedKeepingLineFeeds(message)
        // Split the bytes, not the characters: "\r\n" is one Character, not "\n".
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line, as: UTF8.self)
        }
        if lines.count > 1, lines.last?.isEmpty == true {
            lines.removeLast()
        }
        lines[lines.count - 1] += render(metadata)
        return lines
    }

    /// `line` with the `<` of every `<D>`, `<DD>` and `<DDD>` (D a decimal digit) written as
    /// `\u{3C}`.
    static func escapingPriorityPrefixes(_ line: [UInt8]) -> [UInt8] {
        let open = UInt8(ascii: "<")
        guard line.contains(open) else { return line }
        var output: [UInt8] = []
        output.reserveCapacity(line.count + 8)
        for index in line.indices {
            if line[index] == open, readsAsPriority(line, at: index) {
                output += Array("\\u{3C}".utf8)
            } else {
                output.append(line[index])
            }
        }
        return output
    }

    private static func readsAsPriority(_ line: [UInt8], at index: Int) -> Bool {
        var digits = 0
        var position = index + 1
        while position < line.count, digits <= 3 {
            let byte = line[position]
            if byte == UInt8(ascii: ">") { return digits > 0 }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
            digits += 1
            position += 1
        }
        return false
    }

    /// A whole line (ending in a line feed) cut to ``maximumLineBytes`` at a character
    /// boundary, with the marker, if it is longer.
    private static func cut(_ line: [UInt8]) -> [UInt8] {
        guard line.count > maximumLineBytes else { return line }
        // The marker's length depends on the count it names; the longest count is the line's.
        let room = maximumLineBytes - cutMarker(omitting: line.count).utf8.count - 1
        var end = room
        // Back to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
        while end > 0, line[end] & 0xC0 == 0x80 { end -= 1 }
        let omitted = line.count - 1 - end
        return Array(line[..<end]) + Array(cutMarker(omitting: omitted).utf8) + [UInt8(ascii: "\n")]
    }
}
