import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Keys in an XML property list's text, for messages and for edits that keep the rest of the
/// text (comments among it): `<key>path[0]</key>`, then the first `<key>path[1]</key>` after
/// it, and so on (the library's own guess for its errors' lines). `nil` for a binary property
/// list, or a key not found.
package enum KeyLines {
    /// The line of the key at `path`.
    package static func line(of path: [String], in data: Data) -> Int? {
        guard data.first != UInt8(ascii: "b"), let text = String(data: data, encoding: .utf8),
            let range = range(of: path.map(keyElement), in: text)
        else { return nil }
        return line(at: range.lowerBound, in: text)
    }

    /// The 1-based line of `index`.
    package static func line(at index: String.Index, in text: String) -> Int {
        text[..<index].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    }

    /// The range of the last of `elements`, each searched for after the one before.
    package static func range(of elements: [String], in text: String) -> Range<String.Index>? {
        var found: Range<String.Index>?
        for element in elements {
            guard let range = text[(found?.upperBound ?? text.startIndex)...].firstRange(of: element)
            else { return nil }
            found = range
        }
        return found
    }

    /// `<key>name</key>`, escaped as XML.
    package static func keyElement(_ name: String) -> String { "<key>\(escaped(name))</key>" }

    /// `<string>text</string>`, escaped as XML.
    package static func stringElement(_ text: String) -> String { "<string>\(escaped(text))</string>" }

    package static func escaped(_ text: String) -> String {
        text.replacingEvery("&", with: "&amp;").replacingEvery("<", with: "&lt;").replacingEvery(">", with: "&gt;")
    }
}
