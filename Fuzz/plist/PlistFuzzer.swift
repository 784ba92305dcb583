// libFuzzer target for the fast XML property-list parser, differential against Foundation.
//
// XMLPropertyListParser promises that whenever it returns a value, PropertyListSerialization
// returns the same value for the same bytes (it may return nil: then Foundation decides, which
// is only slower). So for every input our parser answers, Foundation must accept the bytes too
// and give the same tree, compared strictly: types (integer is not real is not boolean),
// strings and keys byte for byte, reals and dates bit for bit. libFuzzer itself catches
// crashes, hangs (-timeout) and memory blowups (-rss_limit_mb). It also checks the scan for text
// after the root element (offsetOfTrailingContent): nothing in what ours accepts, and text appended
// to it found where it starts. And our writer (XMLPropertyListWriter, envctl's drop-ins): for
// the tree ours read, the bytes Foundation's PropertyListSerialization writes, which ours reads
// back as the same tree (but for what XML cannot carry: a carriage return, read as a line feed,
// and a U+FEFF that starts a string, dropped). A failed check calls fatalError,
// whose message -O keeps. Built by Fuzz/run.sh with XMLPropertyListParser.swift and
// SettingValue.swift in the same module, so the internal parser is visible.

import Foundation

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPropertyList(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let data = Data(bytes: pointer, count: size)
    guard let ours = XMLPropertyListParser.parse(data) else { return 0 }
    if XMLPropertyListParser.parse(data) != ours { fatalError("the parser is not deterministic") }
    let theirs: Any
    do {
        // Foundation on Linux refuses `<data/>`, which ours (like Apple's and Python's readers)
        // reads as zero bytes: it gets the document as the loader gives it, with each written
        // `<data></data>`, and every copy of a key written in several Unicode forms spelled as
        // its last copy (Foundation compares keys code unit by code unit).
        let scan = XMLPropertyListParser.scan(data)
        let prepared =
            XMLPropertyListParser.preparedForFoundation(
                data, emptyData: scan.emptyData, keyRewrites: scan.keyRewrites) ?? data
        theirs = try PropertyListSerialization.propertyList(from: prepared, options: [], format: nil)
    } catch {
        fatalError("ours accepts what Foundation rejects (\(error)); ours: \(ours)")
    }
    if let difference = PlistComparison.difference(ours, theirs, at: "root") {
        fatalError("ours and Foundation differ at \(difference); ours: \(ours), Foundation: \(theirs)")
    }
    // The scan for text after the root element (which Foundation ignores and the loader
    // refuses) finds nothing in a document ours accepts, and finds text appended to it where
    // it starts.
    if let offset = XMLPropertyListParser.offsetOfTrailingContent(data) {
        fatalError("text after the root at offset \(offset) in a document ours accepts")
    }
    let written = XMLPropertyListWriter.data(ours)
    guard
        let foundationWritten = try? PropertyListSerialization.data(
            fromPropertyList: ours.anyValue, format: .xml, options: 0)
    else { fatalError("Foundation cannot write what ours read: \(ours)") }
    if written != foundationWritten {
        fatalError(
            "our writer and Foundation's differ:\n\(String(decoding: written, as: UTF8.self))\nFoundation:\n"
                + String(decoding: foundationWritten, as: UTF8.self))
    }
    if WrittenTree.readsBack(ours) {
        guard let back = XMLPropertyListParser.parse(written) else {
            fatalError("ours refuses what our writer wrote:\n\(String(decoding: written, as: UTF8.self))")
        }
        if !WrittenTree.same(back, ours) { fatalError("written and read back, \(ours) is \(back)") }
    }
    for junk in ["x", "<plist><dict/></plist>", "<?pi?>", "<!-- unterminated"] {
        let offset = XMLPropertyListParser.offsetOfTrailingContent(data + Data(junk.utf8))
        if offset != data.count {
            fatalError("\(junk.debugDescription) appended is found at \(offset as Any), not \(data.count)")
        }
    }
    return 0
}

/// What a tree written as XML reads back as.
enum WrittenTree {
    /// Whether every string and key of `value` reads back as written: none holds a carriage
    /// return (XML reads it as a line feed) or starts with U+FEFF (dropped as a byte-order mark).
    static func readsBack(_ value: SettingValue) -> Bool {
        func text(_ string: String) -> Bool {
            !string.utf8.contains(0x0D) && string.unicodeScalars.first != "\u{FEFF}"
        }
        switch value {
        case .string(let string): return text(string)
        case .array(let elements): return elements.allSatisfy(readsBack)
        case .dictionary(let entries): return entries.allSatisfy { text($0.key) && readsBack($0.value) }
        default: return true
        }
    }

    /// `==`, but `nan` equals `nan` (zero's sign is not written: `-0.0` reads back as `0.0`,
    /// which `==` holds equal).
    static func same(_ one: SettingValue, _ other: SettingValue) -> Bool {
        switch (one, other) {
        case (.real(let a), .real(let b)): return a == b || (a.isNaN && b.isNaN)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.allSatisfy { entry in b[entry.key].map { same(entry.value, $0) } ?? false }
        default: return one == other
        }
    }
}
