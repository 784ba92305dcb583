import Logging

/// Formats log entries as text lines for standard error.
enum LogLineFormatter {
    /// Lines for a service's standard error, which journald and syslog parse: every line
    /// starts with `<N>` (the syslog priority), so a multi-line message keeps its priority.
    ///
    /// `"<3>could not open file path=/etc/x\n"`
    static func prefixed(
        priority: SyslogPriority, message: String, metadata: Logger.Metadata
    ) -> String {
        let prefix = "<\(priority.rawValue)>"
        let lines = self.lines(of: message + render(metadata))
        return lines.map { prefix + $0 + "\n" }.joined()
    }

    /// Readable lines for a terminal: timestamp, level, label, message and metadata, with
    /// continuation lines of a multi-line message indented.
    ///
    /// `"2025-01-31T14:05:09.123+0100 info daemon: reloaded generation=3\n"`
    static func plain(
        timestamp: String, level: Logger.Level, label: String, message: String,
        metadata: Logger.Metadata
    ) -> String {
        let lines = self.lines(of: message + render(metadata))
        let header = "\(timestamp) \(level)\(label.isEmpty ? "" : " \(label)"): "
        var text = header + lines[0] + "\n"
        for line in lines.dropFirst() {
            text += continuationIndent + line + "\n"
        }
        return text
    }

    /// The metadata as ` key=value` pairs sorted by key, or an empty string.
    static func render(_ metadata: Logger.Metadata) -> String {
        metadata.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
    }

    /// The indentation of a multi-line message's continuation lines on a terminal.
    static let continuationIndent = "    "

    /// Splits text at line breaks; a single trailing line break does not add an empty line.
    private static func lines(of text: String) -> [Substring] {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        if lines.count > 1, lines.last?.isEmpty == true {
            lines.removeLast()
        }
        return lines
    }
}
