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

/// A strict structural comparison of a SettingValue with the object Foundation returns.
enum PlistComparison {
    /// Where the two differ (a path and what differs), or nil if they are the same.
    static func difference(_ ours: SettingValue, _ theirs: Any, at path: String) -> String? {
        // Foundation on Linux returns Swift Bools for <true/> and <false/>, and NSNumbers for
        // <integer> and <real>: check the Bool first, as a Bool also bridges to NSNumber.
        let isBool = type(of: theirs) == Bool.self
        switch ours {
        case .bool(let value):
            guard isBool, let other = theirs as? Bool else { return "\(path): boolean vs \(type(of: theirs))" }
            return value == other ? nil : "\(path): \(value) vs \(other)"
        case .integer(let value):
            guard !isBool, let number = theirs as? NSNumber else { return "\(path): integer vs \(type(of: theirs))" }
            let kind = String(cString: number.objCType)
            guard !["d", "f"].contains(kind) else { return "\(path): integer vs real" }
            // An unsigned NSNumber above Int.max would wrap in int64Value.
            guard kind != "Q" || number.uint64Value <= UInt64(Int.max), number.int64Value == Int64(value) else {
                return "\(path): \(value) vs \(number)"
            }
            return nil
        case .real(let value):
            guard !isBool, let number = theirs as? NSNumber else { return "\(path): real vs \(type(of: theirs))" }
            guard ["d", "f"].contains(String(cString: number.objCType)) else { return "\(path): real vs integer" }
            let other = number.doubleValue
            let same = value.bitPattern == other.bitPattern || (value.isNaN && other.isNaN)
            return same ? nil : "\(path): \(value) vs \(other)"
        case .string(let value):
            guard let other = theirs as? String else { return "\(path): string vs \(type(of: theirs))" }
            // Byte for byte: Swift's String equality would hide a difference in normalization.
            return value.utf8.elementsEqual(other.utf8)
                ? nil : "\(path): \(value.debugDescription) vs \(other.debugDescription)"
        case .date(let value):
            guard let other = theirs as? Date else { return "\(path): date vs \(type(of: theirs))" }
            let (seconds, otherSeconds) = (value.timeIntervalSinceReferenceDate, other.timeIntervalSinceReferenceDate)
            return seconds.bitPattern == otherSeconds.bitPattern ? nil : "\(path): \(seconds) vs \(otherSeconds)"
        case .data(let value):
            guard let other = theirs as? Data else { return "\(path): data vs \(type(of: theirs))" }
            return value == other ? nil : "\(path): \(Array(value)) vs \(Array(other))"
        case .array(let values):
            guard let others = theirs as? [Any] else { return "\(path): array vs \(type(of: theirs))" }
            guard values.count == others.count else { return "\(path): \(values.count) vs \(others.count) elements" }
            for (index, value) in values.enumerated() {
                if let difference = difference(value, others[index], at: "\(path)[\(index)]") { return difference }
            }
            return nil
        case .dictionary(let values):
            guard let others = theirs as? [String: Any] else { return "\(path): dictionary vs \(type(of: theirs))" }
            guard values.count == others.count else { return "\(path): \(values.count) vs \(others.count) keys" }
            // Keys matched byte for byte, for the same reason as strings.
            var byBytes: [[UInt8]: Any] = [:]
            for (key, value) in others { byBytes[Array(key.utf8)] = value }
            guard byBytes.count == others.count else { return "\(path): Foundation's keys collide" }
            for (key, value) in values {
                guard let other = byBytes[Array(key.utf8)] else {
                    return "\(path): key \(key.debugDescription) missing"
                }
                if let difference = difference(value, other, at: "\(path).\(key)") { return difference }
            }
            return nil
        }
    }
}
