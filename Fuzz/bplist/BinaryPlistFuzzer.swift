// libFuzzer target for BinaryPropertyListBounds, the walk that measures a binary property list,
// and BinaryPropertyListParser, which decodes what the walk lets through.
//
// Whatever the bytes, the walk must end (libFuzzer's -timeout) without a crash. Whenever it
// lets a file through, our parser must end too, and so must Foundation's; the tree Foundation
// builds must hold no more values, counting every element, key and value, than the walk's
// budget (the promise that keeps a few hundred bytes from expanding into billions of values);
// and when both parsers read the file, they read the same values (PlistComparison: types,
// strings byte for byte, reals and dates bit for bit), unless a key repeats in one dictionary
// (Foundation's binary reader keeps the first copy, ours the last, as every XML reader does).
// Files only one of them reads are no failure: ours refuses integers no setting holds, and
// reads some malformed files Foundation refuses. A failed
// check calls fatalError, whose message -O keeps. Built by Fuzz/run.sh with the walk, the parser
// and SettingValue in the same module, so the internal types are visible.

import Foundation

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryPropertyList(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let data = Data(bytes: pointer, count: size)
    let inspection = BinaryPropertyListBounds.inspect(data)
    guard inspection.problem == nil else { return 0 }
    let ours = try? BinaryPropertyListParser.parse(data)
    guard let theirs = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) else {
        return 0
    }
    let budget = BinaryPropertyListBounds.valueBudget(forSize: data.count)
    var values = 0
    var pending: [Any] = [theirs]
    while let next = pending.popLast() {
        values += 1
        if values > budget {
            fatalError("the walk let through a file that Foundation expands past \(budget) values")
        }
        if let array = next as? [Any] {
            pending += array
        } else if let dictionary = next as? [AnyHashable: Any] {
            values += dictionary.count  // the keys
            pending += Array(dictionary.values)
        }
    }
    if let ours, inspection.duplicates.count == 0,
        let difference = PlistComparison.difference(ours, theirs, at: "root")
    {
        fatalError("ours and Foundation differ at \(difference); ours: \(ours), Foundation: \(theirs)")
    }
    return 0
}
