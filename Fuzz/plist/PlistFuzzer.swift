// libFuzzer target for the fast XML property-list parser, differential against Foundation.
//
// XMLPropertyListParser promises that whenever it returns a value, PropertyListSerialization
// returns the same value for the same bytes (it may return nil: then Foundation decides, which
// is only slower). So for every input our parser answers, Foundation must accept the bytes too
// and give the same tree, compared strictly: types (integer is not real is not boolean),
// strings and keys byte for byte, reals and dates bit for bit. libFuzzer itself catches
// crashes, hangs (-timeout) and memory blowups (-rss_limit_mb). It also checks the scan for text
// after the root element (offsetOfTrailingContent): nothing in what ours accepts, and text appended
// to it found where it starts. A failed check calls fatalError,
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
    for junk in ["x", "<plist><dict/></plist>", "<?pi?>", "<!-- unterminated"] {
        let offset = XMLPropertyListParser.offsetOfTrailingContent(data + Data(junk.utf8))
        if offset != data.count {
            fatalError("\(junk.debugDescription) appended is found at \(offset as Any), not \(data.count)")
        }
    }
    return 0
}
