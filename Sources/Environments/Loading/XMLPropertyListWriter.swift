#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes ``SettingValue``s as an XML property list, byte for byte as Foundation's
/// `PropertyListSerialization.data(fromPropertyList:format: .xml, options: 0)` writes the same
/// values (CoreFoundation's writer, on Linux and Darwin), without Foundation: a drop-in that
/// `envctl` rewrites keeps the form Foundation gave it, and a diff shows only what changed.
///
/// What Foundation writes, and so this writer: the XML declaration and Apple's document type; one
/// tab per level; a dictionary's keys sorted by their UTF-16 code units (as `CFStringCompare`
/// sorts them, which puts U+1F600 before U+FF5E); `&`, `<` and `>` escaped as `&amp;`, `&lt;`
/// and `&gt;` in keys and strings, and nothing else (quotes, tabs, line feeds and other
/// characters stay as they are: ``XMLCharacters`` in EnvironmentsEditing refuses the ones no
/// reader reads back); `<dict/>` and `<array/>` when empty; integers in decimal; reals as
/// `%.17g` writes them (`1.5`, `0.10000000000000001`, `1e+17`), zero as `0.0`, and `nan`,
/// `+infinity`, `-infinity`; dates in UTC as `yyyy-MM-ddTHH:mm:ssZ`, the seconds rounded down;
/// data in base64, on lines of their own after as many tabs as the element's level (at most 8),
/// each line 76 characters less 8 for each of those tabs; `<data>` and `</data>` on lines of
/// their own, also when the data is empty.
///
/// ``XMLPropertyListParser`` reads back what it writes as the same values (but a date's
/// fraction of a second, which the form cannot hold); `XMLPropertyListWriterTests` compares its
/// bytes with Foundation's, and the `plist` fuzzer checks the round trip.
package enum XMLPropertyListWriter {
    /// The document for `value` (a drop-in's root dictionary, usually): UTF-8 bytes.
    package static func data(_ value: SettingValue) -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(1024)
        output.append(contentsOf: header.utf8)
        write(value, indent: 0, into: &output)
        output.append(contentsOf: "</plist>\n".utf8)
        return Data(output)
    }

    /// What precedes the root value.
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    private static func write(_ value: SettingValue, indent: Int, into output: inout [UInt8]) {
        output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
        switch value {
        case .string(let text):
            element("string", escaped: text, into: &output)
        case .integer(let number):
            element("integer", text: String(number), into: &output)
        case .real(let number):
            element("real", text: real(number), into: &output)
        case .bool(let flag):
            output.append(contentsOf: (flag ? "<true/>\n" : "<false/>\n").utf8)
        case .date(let date):
            element("date", text: self.date(date), into: &output)
        case .data(let bytes):
            output.append(contentsOf: "<data>\n".utf8)
            base64Lines(bytes, indent: indent, into: &output)
            output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
            output.append(contentsOf: "</data>\n".utf8)
        case .array(let elements):
            guard !elements.isEmpty else {
                output.append(contentsOf: "<array/>\n".utf8)
                return
            }
            output.append(contentsOf: "<array>\n".utf8)
            for element in elements { write(element, indent: indent + 1, into: &output) }
            output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
            output.append(contentsOf: "</array>\n".utf8)
        case .dictionary(let entries):
            guard !entries.isEmpty else {
                output.append(contentsOf: "<dict/>\n".utf8)
                return
            }
            output.append(contentsOf: "<dict>\n".utf8)
            for key in sortedKeys(entries) {
                output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent + 1))
                element("key", escaped: key, into: &output)
                write(entries[key]!, indent: indent + 1, into: &output)
            }
            output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: indent))
            output.append(contentsOf: "</dict>\n".utf8)
        }
    }

    /// The keys in the order CoreFoundation writes them: by UTF-16 code units, as
    /// `CFStringCompare` without options compares.
    static func sortedKeys(_ entries: [String: SettingValue]) -> [String] {
        entries.keys.sorted { $0.utf16.lexicographicallyPrecedes($1.utf16) }
    }

    private static func element(_ name: String, text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "<"))
        output.append(contentsOf: name.utf8)
        output.append(UInt8(ascii: ">"))
        output.append(contentsOf: text.utf8)
        output.append(contentsOf: "</".utf8)
        output.append(contentsOf: name.utf8)
        output.append(contentsOf: ">\n".utf8)
    }

    private static func element(_ name: String, escaped text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "<"))
        output.append(contentsOf: name.utf8)
        output.append(UInt8(ascii: ">"))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            default: output.append(byte)
            }
        }
        output.append(contentsOf: "</".utf8)
        output.append(contentsOf: name.utf8)
        output.append(contentsOf: ">\n".utf8)
    }

    /// A real as CoreFoundation writes it: `%.17g`, but zero (of either sign) as `0.0`, and
    /// `nan`, `+infinity` and `-infinity`.
    static func real(_ number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number > 0 ? "+infinity" : "-infinity" }
        if number == 0 { return "0.0" }
        // 17 significant digits, a sign, a point and `e-308` fit in 32 bytes.
        var buffer = [CChar](repeating: 0, count: 32)
        _ = withVaList([number]) { arguments in
            buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, "%.17g", arguments) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A date as CoreFoundation writes it: `2001-01-01T00:00:00Z`, in UTC in the proleptic
    /// Gregorian calendar, the seconds rounded down (`-0.5` is `2000-12-31T23:59:59Z`); the year
    /// as `%04d` writes it (`0000`, `-005`, `33689`).
    static func date(_ date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        // Dates no property list reader reads back (not a number, or beyond any year an Int
        // holds) are written as the nearest instant that has a form.
        let limit = 1e17
        let seconds = interval.isNaN ? 0 : Int(min(max(interval, -limit), limit).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : -((-seconds + 86_399) / 86_400)
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's `civil_from_days`, from days since 2001-01-01 (730,791 days after
        // 0000-03-01).
        let z = days + 730_791
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func padded(_ number: Int, _ width: Int) -> String {
            let digits = String(number.magnitude)
            let sign = number < 0 ? "-" : ""
            return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
        }
        return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + "T"
            + padded(secondOfDay / 3_600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":"
            + padded(secondOfDay % 60, 2) + "Z"
    }

    /// `bytes` in base64 on lines of their own, each after `min(indent, 8)` tabs and at most
    /// `76 - 8 * min(indent, 8)` characters long (a multiple of 4): CoreFoundation's layout.
    private static func base64Lines(_ bytes: Data, indent: Int, into output: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        let tabs = min(indent, 8)
        let lineLength = 76 - 8 * tabs
        let encoded = Array(bytes.base64EncodedString().utf8)
        var start = 0
        while start < encoded.count {
            let end = min(start + lineLength, encoded.count)
            output.append(contentsOf: repeatElement(UInt8(ascii: "\t"), count: tabs))
            output.append(contentsOf: encoded[start..<end])
            output.append(UInt8(ascii: "\n"))
            start = end
        }
    }
}
