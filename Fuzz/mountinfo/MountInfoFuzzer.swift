// libFuzzer target for the mount table parser (`/proc/self/mountinfo`, proc(5)) that
// FileWatching reads whenever the kernel says the mount table changed.
//
// Any bytes must parse without trapping. Every entry the parser returns must:
// - have a root and a mount point that start with `/`, and a device of the form `major:minor`;
// - survive formatting: written back as a mountinfo line (paths escaped as the kernel does,
//   `\040` and the like), it parses to the same entry;
// - be relevant to its own mount point, and to every directory above it (`/` included);
// - have overlay layers that are non-empty paths.
// The unescaping must undo the kernel's escaping of any text.
// Built by Fuzz/run.sh with Sources/FileWatching/MountTable.swift.

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMountInfo(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: pointer, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let entries = MountTable.parse(text)
    guard entries.count <= text.utf8.count / 10 + 1 else { fatalError("\(entries.count) entries from \(size) bytes") }
    for entry in entries {
        guard entry.root.hasPrefix("/"), entry.mountPoint.hasPrefix("/") else {
            fatalError("relative path in \(entry)")
        }
        let parts = entry.device.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) else {
            fatalError("device \(entry.device.debugDescription)")
        }
        let line =
            "\(entry.mountID) \(entry.parentID) \(entry.device) \(escape(entry.root)) \(escape(entry.mountPoint)) rw "
            + "shared:1 - \(escape(entry.fileSystemType)) \(escape(entry.source)) \(entry.superOptions)"
        guard let again = MountTable.parseLine(Substring(line)) else {
            fatalError("\(line.debugDescription) does not parse")
        }
        guard again == entry else { fatalError("\(entry) formatted as \(line.debugDescription) parses as \(again)") }
        guard MountTable.relevantMounts(in: [entry], to: [entry.mountPoint]) == [entry.identity],
            MountTable.relevantMounts(in: [entry], to: ["/"]) == [entry.identity]
        else { fatalError("\(entry) is not relevant to its own mount point") }
        var above = entry.mountPoint
        while let slash = above.lastIndex(of: "/"), slash != above.startIndex {
            above = String(above[..<slash])
            guard MountTable.isSameOrBelow(entry.mountPoint, above) else {
                fatalError("\(entry.mountPoint) is not below \(above)")
            }
        }
        guard entry.overlayLowerDirectories.allSatisfy({ !$0.isEmpty }) else { fatalError("empty layer in \(entry)") }
    }
    // Unescaping undoes escaping, whatever the text.
    guard MountTable.unescape(Substring(escape(text))) == text else { fatalError("escaping \(text.debugDescription)") }
    return 0
}

/// Escapes a path as the kernel does in mountinfo: space, tab, line feed and backslash as
/// three octal digits.
func escape(_ text: String) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case " ", "\t", "\n", "\\":
            let digits = String(scalar.value, radix: 8)
            result += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
        default:
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}
