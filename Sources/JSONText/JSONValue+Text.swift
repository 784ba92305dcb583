import TextEscaping

extension JSONValue {
    /// The value as UTF-8 JSON text (RFC 8259), object members sorted by key so that equal
    /// values give equal text.
    ///
    /// - Parameter pretty: Two-space indentation and one member or element per line, with
    ///   `" : "` between a key and its value, as `JSONEncoder`'s `.prettyPrinted` writes (but
    ///   `[]` and `{}` for empty containers, on one line).
    /// - Returns: The text; a real that is not finite, which JSON has no number for, is written
    ///   as the string `"nan"`, `"inf"` or `"-inf"`, as `envctl show --json` writes a setting's
    ///   (``JSONValueEncoder`` refuses such values before they get here).
    package func jsonText(pretty: Bool = false) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(into: &output, pretty: pretty, indent: 0)
        return output
    }

    private func write(into output: inout [UInt8], pretty: Bool, indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value):
            if value.isFinite {
                output.append(contentsOf: Self.realText(value).utf8)
            } else {
                Self.writeString(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf", into: &output)
            }
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(into: &output, indent: indent + 1) }
                element.write(into: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty, !elements.isEmpty { Self.newline(into: &output, indent: indent) }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(into: &output, indent: indent + 1) }
                Self.writeString(key, into: &output)
                output.append(contentsOf: (pretty ? " : " : ":").utf8)
                members[key]!.write(into: &output, pretty: pretty, indent: indent + 1)
            }
            if pretty, !members.isEmpty { Self.newline(into: &output, indent: indent) }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// A finite real as JSON: Swift's shortest round-trip form, which JSON accepts as it is
    /// (`0.1`, `5.0`, `1e-05`, `1e+20`).
    private static func realText(_ value: Double) -> String {
        value.description
    }

    private static func newline(into output: inout [UInt8], indent: Int) {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A string in quotes: `"` and `\` escaped, control characters as `\n`-style or `\u00XX`
    /// escapes, and the characters JSON allows raw but a terminal may act on (DEL, C1 controls,
    /// the line separators U+2028 and U+2029, bidirectional controls) as `\uXXXX`, so that JSON
    /// printed on a terminal cannot drive it; everything else as its UTF-8 bytes.
    private static func writeString(_ string: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        let needsScalars = string.utf8.contains { $0 >= 0x7F }
        guard needsScalars else {
            for byte in string.utf8 { writeASCII(byte, into: &output) }
            output.append(UInt8(ascii: "\""))
            return
        }
        for scalar in string.unicodeScalars {
            if scalar.isASCII && scalar.value != 0x7F {
                writeASCII(UInt8(scalar.value), into: &output)
            } else if ControlCharacters.needsEscaping(scalar) {
                output.append(contentsOf: "\\u".utf8)
                for shift in stride(from: 12, through: 0, by: -4) {
                    output.append(hexDigits[Int((scalar.value >> UInt32(shift)) & 0xF)])
                }
            } else {
                output.append(contentsOf: scalar.utf8)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func writeASCII(_ byte: UInt8, into output: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case UInt8(ascii: "\n"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case UInt8(ascii: "\r"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case UInt8(ascii: "\t"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
        case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
        case 0..<0x20:
            output.append(contentsOf: "\\u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0xF)])
        default: output.append(byte)
        }
    }
}
