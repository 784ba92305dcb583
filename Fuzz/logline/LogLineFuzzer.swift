// libFuzzer target for the stderr log line (`<N>message key=value`) and the control-character
// escaping every text output uses (Sources/SystemdSupport/LogLineFormatter.swift,
// Sources/TextEscaping).
//
// The input is split at its first two 0xFF bytes into a message, a metadata key and a metadata
// value (any bytes, decoded as UTF-8), and its first byte picks the priority. For every input:
// - the `<N>` line is one line: it starts with the entry's own `<N>`, ends with its only line
//   feed, is at most `maximumLineBytes`, and holds no other control character (C0, DEL, C1,
//   U+2028/9, bidirectional controls) and no NUL;
// - after the prefix, no `<` with one to three digits and `>` is left anywhere, so journald,
//   cutting the line at any `LineMax=`, finds no priority but the entry's own;
// - the terminal's lines hold no control character but their line feeds, and every line after
//   the first is indented;
// - escaping is idempotent and leaves nothing to escape.
// Built by Fuzz/run.sh with those sources, swift-log and TextEscaping.

import Logging
import TextEscaping

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLogLine(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: pointer, count: size))
    let parts = bytes.split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false)
    let text = parts.map { String(decoding: $0, as: UTF8.self) }
    let message = text[0]
    let metadata: Logger.Metadata = text.count > 1 ? [text[1]: .string(text.count > 2 ? text[2] : "")] : [:]
    let priority = SyslogPriority(rawValue: Int(bytes.first ?? 0) % 8) ?? .error

    let line = LogLineFormatter.prefixed(priority: priority, message: message, metadata: metadata)
    let utf8 = Array(line.utf8)
    let prefix = Array("<\(priority.rawValue)>".utf8)
    guard utf8.starts(with: prefix), utf8.last == 0x0A, utf8.dropLast().allSatisfy({ $0 != 0x0A }) else {
        fatalError("not one line with its prefix: \(line.debugDescription)")
    }
    guard utf8.count <= LogLineFormatter.maximumLineBytes else { fatalError("\(utf8.count) bytes") }
    let content = String(decoding: utf8.dropFirst(prefix.count).dropLast(), as: UTF8.self)
    guard !ControlCharacters.needsEscaping(in: content) else { fatalError("raw control: \(line.debugDescription)") }
    let contentBytes = Array(content.utf8)
    for index in contentBytes.indices where contentBytes[index] == UInt8(ascii: "<") {
        var position = index + 1
        while position < contentBytes.count, position - index <= 3,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(contentBytes[position])
        {
            position += 1
        }
        if position > index + 1, position < contentBytes.count, contentBytes[position] == UInt8(ascii: ">") {
            fatalError("a priority inside the line: \(line.debugDescription)")
        }
    }

    let plain = LogLineFormatter.plain(timestamp: "T", level: .info, label: "l", message: message, metadata: metadata)
    let plainLines = plain.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    for (index, plainLine) in plainLines.enumerated() {
        guard !ControlCharacters.needsEscaping(in: String(plainLine)) else {
            fatalError("raw control on a terminal: \(plain.debugDescription)")
        }
        guard index == 0 || plainLine.hasPrefix(LogLineFormatter.continuationIndent) else {
            fatalError("a continuation line that is not indented: \(plain.debugDescription)")
        }
    }

    for piece in text {
        let once = ControlCharacters.escaped(piece)
        guard ControlCharacters.escaped(once) == once, !ControlCharacters.needsEscaping(in: once) else {
            fatalError("escaping \(piece.debugDescription) is not idempotent")
        }
    }
    return 0
}
