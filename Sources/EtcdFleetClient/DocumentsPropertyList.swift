#if Fleet
    package import Environments

    /// The fleet's documents as `envctl-fleet documents` hands them to envctl: a binary property
    /// list (`bplist00`) of an array of dictionaries, lowest document first, each with `origin`
    /// (a string) and `data` (the document's bytes), as Foundation's `PropertyListSerialization`
    /// wrote it before, written here without full Foundation (which only that writer needed).
    ///
    /// Every object is written in the order it is referenced: the root array, then each
    /// dictionary followed by its keys and values (the keys are not shared between dictionaries,
    /// which the format allows). References take the fewest bytes (1, 2, 4 or 8) that hold the
    /// object count, offsets the fewest that hold the offset table's offset, as Foundation's
    /// reader checks.
    package enum DocumentsPropertyList {
        /// The property list of `documents`.
        package static func encode(_ documents: [ConfigurationDocument]) -> [UInt8] {
            // Object 0 the root array; document i's dictionary is 1 + 5i, its keys and values follow.
            var objects: [[UInt8]] = []
            let count = 1 + 5 * documents.count
            // Readers want the size to hold the count itself, not only the largest reference.
            let referenceSize = byteCount(forMaximum: UInt64(count))
            objects.append(collection(0xA, references: documents.indices.map { 1 + 5 * $0 }, size: referenceSize))
            for (index, document) in documents.enumerated() {
                let first = 1 + 5 * index
                // Keys first, then values, in one order: origin, data.
                objects.append(
                    collection(
                        0xD, references: [first + 1, first + 2, first + 3, first + 4], size: referenceSize, pairs: 2))
                objects.append(string("origin"))
                objects.append(string("data"))
                objects.append(string(document.origin))
                objects.append(marker(0x4, count: document.data.count) + Array(document.data))
            }
            var bytes = Array("bplist00".utf8)
            var offsets: [UInt64] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(UInt64(bytes.count))
                bytes += object
            }
            let tableOffset = UInt64(bytes.count)
            // Readers want the size to hold the table's own offset too (Foundation refuses the file else).
            let offsetSize = byteCount(forMaximum: tableOffset)
            for offset in offsets { bytes += bigEndian(offset, size: offsetSize) }
            // The trailer: six unused bytes, the two sizes, the object count, the root, the table.
            bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            bytes += bigEndian(UInt64(objects.count), size: 8) + bigEndian(0, size: 8) + bigEndian(tableOffset, size: 8)
            return bytes
        }

        /// An array (`0xA`) of `references`, or a dictionary (`0xD`) of `pairs` keys followed by
        /// as many values.
        private static func collection(_ kind: UInt8, references: [Int], size: Int, pairs: Int? = nil) -> [UInt8] {
            marker(kind, count: pairs ?? references.count) + references.flatMap { bigEndian(UInt64($0), size: size) }
        }

        /// A string: ASCII as bytes (`0x5`), anything else as UTF-16, big-endian (`0x6`), counted
        /// in UTF-16 code units.
        private static func string(_ text: String) -> [UInt8] {
            if text.utf8.allSatisfy({ $0 < 0x80 }) { return marker(0x5, count: text.utf8.count) + Array(text.utf8) }
            let units = Array(text.utf16)
            return marker(0x6, count: units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }

        /// An object's first byte, its kind and its count; a count of 15 or more follows it as an
        /// integer object (`0x1`, 2^n bytes).
        private static func marker(_ kind: UInt8, count: Int) -> [UInt8] {
            guard count >= 15 else { return [kind << 4 | UInt8(count)] }
            let size = byteCount(forMaximum: UInt64(count))
            let power: UInt8 = size == 1 ? 0 : size == 2 ? 1 : size <= 4 ? 2 : 3
            return [kind << 4 | 0xF, 0x10 | power] + bigEndian(UInt64(count), size: 1 << power)
        }

        /// How many bytes (1, 2, 4 or 8) hold `value`.
        private static func byteCount(forMaximum value: UInt64) -> Int {
            value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
        }

        private static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (UInt64($0) * 8)) }
        }
    }
#endif
