import Environments

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The characters a drop-in that `envctl` writes may hold, so that every property-list reader
/// reads it as envctl and the daemon do.
///
/// XML 1.0 allows tab, line feed, carriage return, and the characters from U+0020 on except the
/// surrogates (which a Swift string cannot hold) and U+FFFE and U+FFFF. Foundation writes the
/// others (ESC, NUL and the rest of the C0 controls) as they are, and reads them back, but
/// Python's `plistlib`, expat, libxml2 and `plutil` refuse the whole file. A carriage return is
/// allowed, but every XML reader turns it into a line feed (Foundation writes it unescaped),
/// so a value would not read back as written: it is refused too. Refused rather than written
/// in another form: no form of these characters is read alike by every property-list reader.
package enum XMLCharacters {
    /// Whether an XML property list written by Foundation reads `scalar` back the same in every
    /// reader.
    package static func isWritable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: true
        case 0x20...0xD7FF, 0xE000...0xFFFD, 0x1_0000...0x10_FFFF: true
        default: false
        }
    }

    /// The first character of `text` that is not ``isWritable(_:)``, if any.
    package static func firstUnwritable(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { !isWritable($0) }
    }

    /// `U+001B (ESC)`: the code point, and a name for the controls.
    package static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        let names: [UInt32: String] = [
            0x00: "NUL", 0x07: "BEL", 0x08: "backspace", 0x0B: "vertical tab", 0x0C: "form feed",
            0x0D: "carriage return", 0x1B: "ESC", 0x7F: "DEL", 0xFFFE: "a noncharacter", 0xFFFF: "a noncharacter",
        ]
        if let name = names[scalar.value] { return "\(code) (\(name))" }
        return scalar.value < 0x20 ? "\(code) (a control character)" : code
    }

    /// Why a character cannot be written, for a message.
    package static func reason(_ scalar: Unicode.Scalar) -> String {
        scalar.value == 0x0D
            ? "XML readers read a carriage return as a line feed, so it would not read back as written"
            : "XML 1.0 does not allow it, and other property-list readers (Python's plistlib, expat, plutil) refuse the whole file"
    }

    /// Checks a key and its value as `envctl set` was given them, before anything is read or
    /// written.
    ///
    /// - Throws: A ``Failure`` naming the key, the character and what to do instead.
    package static func check(key: String, value: Any) throws {
        if let scalar = firstUnwritable(in: key) {
            throw keyFailure(key, scalar)
        }
        if let text = value as? String, let scalar = firstUnwritable(in: text) {
            throw valueFailure(key, scalar)
        }
    }

    /// Checks every key and string of a drop-in about to be written (at any depth, in arrays
    /// too): what `set` and `unset` write, and what `migrate` rewrites.
    ///
    /// - Throws: A ``Failure`` for a key or string that holds a character that is not
    ///   ``isWritable(_:)``: a dictionary's keys (in order) before their values, the same one on
    ///   every run.
    package static func check(_ root: [String: Any]) throws {
        // (value, key path so far), depth first, without recursion.
        var stack: [(value: Any, path: String)] = [(root, "")]
        while let (value, path) = stack.popLast() {
            switch value {
            case let dictionary as [String: Any]:
                let sorted = dictionary.sorted { $0.key < $1.key }
                for (key, _) in sorted {
                    if let scalar = firstUnwritable(in: key) { throw keyFailure(SettingPath.joined(path, key), scalar) }
                }
                for (key, child) in sorted.reversed() { stack.append((child, SettingPath.joined(path, key))) }
            case let array as [Any]:
                for (index, element) in array.enumerated().reversed() {
                    stack.append((element, "\(path)[\(index)]"))
                }
            case let text as String:
                if let scalar = firstUnwritable(in: text) { throw valueFailure(path, scalar) }
            default:
                continue
            }
        }
    }

    private static func keyFailure(_ key: String, _ scalar: Unicode.Scalar) -> Failure {
        Failure(
            .unwritableCharacter,
            "the key '\(key)' holds \(describe(scalar)), which envctl does not write into a property list: "
                + "\(reason(scalar)); nothing was written. Use a key without it (one the drop-in holds "
                + "already: remove it with envctl unset, or envctl edit)")
    }

    private static func valueFailure(_ key: String, _ scalar: Unicode.Scalar) -> Failure {
        Failure(
            .unwritableCharacter,
            "the value for '\(key)' holds \(describe(scalar)), which envctl does not write into a property list: "
                + "\(reason(scalar)); nothing was written. Leave it out, or write the bytes as data "
                + "(--type data with their base64); one the drop-in holds already: set it anew, or envctl edit")
    }
}
