// libFuzzer target for BinaryPropertyListBounds, the walk that measures a binary property list
// before Foundation parses it.
//
// Whatever the bytes, the walk must end (libFuzzer's -timeout) without a crash. Whenever it
// lets a file through, Foundation's parser must end too, and the tree it builds must hold no
// more values, counting every element, key and value, than the walk's budget: that is the
// promise that keeps a few hundred bytes from expanding into billions of values. A failed check
// calls fatalError, whose message -O keeps. Built by Fuzz/run.sh with
// BinaryPropertyListBounds.swift in the same module, so the internal type is visible.

import Foundation

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBinaryPropertyList(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let data = Data(bytes: pointer, count: size)
    guard BinaryPropertyListBounds.problem(in: data) == nil else { return 0 }
    guard let object = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) else {
        return 0
    }
    let budget = BinaryPropertyListBounds.valueBudget(forSize: data.count)
    var values = 0
    var pending: [Any] = [object]
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
    return 0
}
