import Foundation

/// Hand-built binary property lists, for tests that need a file no encoder writes (a key twice
/// in one dictionary, in two Unicode forms).
enum BinaryPropertyListBuilder {
    /// A binary property list of `objects` (each already encoded), object 0 the root, with
    /// one-byte offsets and references.
    static func document(_ objects: [[UInt8]]) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        func be64(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + be64(objects.count) + be64(0) + be64(table)
        return Data(bytes)
    }

    /// A UTF-16 string object (fewer than 15 code units).
    static func utf16(_ text: String) -> [UInt8] {
        let units = Array(text.utf16)
        return [0x60 | UInt8(units.count)] + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}
