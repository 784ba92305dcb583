#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a binary property list expands to, measured before ``BinaryPropertyListParser`` decodes it.
///
/// A binary property list refers to its values by number, so one array or dictionary can be
/// referred to many times: 40 arrays that each hold the one before it twice are 2^40 values in
/// 300 bytes, and a parser that builds every reference as a value of its own (ours, and
/// Foundation's) never finishes. A file that refers to a value many times is not a configuration
/// file; this walks the references as a parser would, counting, and stops as soon as either bound is passed:
///
/// - at most ``valueBudget(forSize:)`` values, counting a value once for every reference to it:
///   as many as the file has bytes, or 4,096 for a smaller file. Every reference takes at least
///   one byte, so a file whose writer repeats no array or dictionary (Foundation, `plutil`,
///   Python's `plistlib`) always fits;
/// - at most ``maximumNesting`` levels of arrays and dictionaries.
///
/// The walk needs no memory beyond one entry per level and takes time in proportion to the
/// budget. A structure it cannot follow (a reference or an offset outside the file, a count
/// past its end) is refused too, rather than handed to a parser that may read it differently.
enum BinaryPropertyListBounds {
    /// The deepest nesting of arrays and dictionaries accepted (Foundation refuses XML nested
    /// more deeply than about 500 levels; our XML parser takes 128).
    static let maximumNesting = 512

    /// The values (one per reference) a file of `size` bytes may hold.
    static func valueBudget(forSize size: Int) -> Int { max(size, 4096) }

    /// Why a binary property list is refused.
    enum Problem: Equatable, Sendable {
        /// It holds more values, counting every reference, than `budget`.
        case tooManyValues(budget: Int)
        /// Arrays and dictionaries nest more deeply than ``BinaryPropertyListBounds/maximumNesting``.
        case tooDeep
        /// Its structure cannot be followed; the reason says where.
        case malformed(String)

        /// A sentence for an error message.
        var reason: String {
            switch self {
            case .tooManyValues(let budget):
                return
                    "it refers to its values so many times that it would expand to more than \(budget) values (a binary property list may hold as many as it has bytes)"
            case .tooDeep:
                return
                    "its arrays and dictionaries nest more than \(BinaryPropertyListBounds.maximumNesting) levels deep"
            case .malformed(let detail):
                return "its structure is broken: \(detail)"
            }
        }
    }

    /// Whether `data` starts as a binary property list does.
    static func isBinaryPropertyList(_ data: Data) -> Bool {
        data.starts(with: Array("bplist".utf8))
    }

    /// Checks a binary property list; `nil` when it may be decoded.
    static func problem(in data: Data) -> Problem? {
        inspect(data).problem
    }

    /// What the walk of a binary property list finds.
    struct Inspection: Sendable {
        /// Why the file must not be decoded, or `nil` when it may.
        var problem: Problem?
        /// Keys written more than once in one dictionary (binary files have no lines).
        var duplicates = PropertyListDuplicateKeys()
    }

    /// Checks a binary property list and finds the keys written more than once in one
    /// dictionary (each dictionary is examined once, however often it is referred to).
    static func inspect(_ data: Data) -> Inspection {
        data.withUnsafeBytes { buffer in
            var reader = Reader(bytes: buffer)
            let problem = reader.check()
            return Inspection(problem: problem, duplicates: reader.duplicates)
        }
    }

    /// Reads the structure of a binary property list: its trailer, its objects' kinds and
    /// counts, and its strings (``BinaryPropertyListParser`` decodes values with it too).
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offsetSize = 0
        var referenceSize = 0
        var objectCount = 0
        var offsetTable = 0
        /// Where the trailer starts: nothing an object holds may reach past it.
        var end = 0
        /// Keys written more than once in one dictionary.
        var duplicates = PropertyListDuplicateKeys()
        /// The dictionaries already examined for duplicate keys.
        private var examined: Set<Int> = []
        /// The key strings decoded so far, by object.
        private var keyNames: [Int: String] = [:]

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        /// An unsigned big-endian integer of `size` (1 to 8) bytes at `offset`, if it fits
        /// in `Int`.
        func integer(at offset: Int, size: Int) -> Int? {
            guard size >= 1, size <= 8, offset >= 0, offset <= bytes.count - size else { return nil }
            var value: UInt64 = 0
            for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }

        /// What one object is, as far as the walk needs to know.
        enum Entry {
            /// A string: the only kind a dictionary's key may be.
            case string
            /// A boolean, number, date or data.
            case scalar
            /// An array or dictionary: where its references start, how many there are (a
            /// dictionary's keys, then its values), and how many of them are keys.
            case container(start: Int, references: Int, keys: Int)
        }

        /// The object numbered `object`. Kinds that are no property-list value (a set, a
        /// keyed archiver's UID, null, fill, anything unknown) are refused: Foundation's parser
        /// makes them, but turning them into Swift values can crash (a set as a dictionary's key
        /// did).
        func entry(_ object: Int) throws(ProblemThrown) -> Entry {
            let offset = try self.offset(of: object)
            let marker = bytes[offset]
            let kind = marker >> 4
            switch kind {
            case 0x0 where marker == 0x08 || marker == 0x09: return .scalar  // false, true
            case 0x1 where marker & 0x0F <= 4: return .scalar  // integers of 1 to 16 bytes
            case 0x2 where marker == 0x22 || marker == 0x23: return .scalar  // 4- and 8-byte reals
            case 0x3 where marker == 0x33: return .scalar  // a date
            case 0x4: return .scalar  // data
            case 0x5, 0x6: return .string  // ASCII, UTF-16
            case 0xA, 0xD: break
            default:
                throw ProblemThrown(
                    .malformed(
                        "object \(object) is of a kind no property-list value has (marker 0x\(String(marker, radix: 16)))"
                    ))
            }
            let (count, start) = try self.count(at: offset, object: object)
            let references = count.multipliedReportingOverflow(by: kind == 0xD ? 2 : 1)
            let length = references.partialValue.multipliedReportingOverflow(by: referenceSize)
            guard !references.overflow, !length.overflow, start <= end, length.partialValue <= end - start else {
                throw ProblemThrown(.malformed("object \(object) holds more references than the file has room for"))
            }
            return .container(start: start, references: references.partialValue, keys: kind == 0xD ? count : 0)
        }

        /// Where the object numbered `object` starts.
        func offset(of object: Int) throws(ProblemThrown) -> Int {
            guard object >= 0, object < objectCount,
                let offset = integer(at: offsetTable + object * offsetSize, size: offsetSize)
            else { throw ProblemThrown(.malformed("a reference to object \(object), which the offset table lacks")) }
            guard offset >= 8, offset < end else {
                throw ProblemThrown(.malformed("object \(object) is said to be at \(offset), outside the objects"))
            }
            return offset
        }

        /// The count of the object at `offset` and where its content starts: the low nibble of
        /// its marker, or (when that is 0xF) the integer that follows.
        func count(at offset: Int, object: Int) throws(ProblemThrown) -> (count: Int, start: Int) {
            var count = Int(bytes[offset] & 0x0F)
            var start = offset + 1
            if count == 0x0F {
                // The count follows as an integer value: 0x1N, then 2^N bytes.
                guard start < end, bytes[start] >> 4 == 0x1, bytes[start] & 0x0F <= 3 else {
                    throw ProblemThrown(.malformed("object \(object) has a count that is not an integer"))
                }
                let size = 1 << Int(bytes[start] & 0x0F)
                guard let extended = integer(at: start + 1, size: size) else {
                    throw ProblemThrown(.malformed("object \(object)'s count runs past the end"))
                }
                count = extended
                start += 1 + size
            }
            return (count, start)
        }

        /// The string a dictionary's key refers to (ASCII or UTF-16), decoded once.
        mutating func keyName(_ object: Int) throws(ProblemThrown) -> String {
            if let name = keyNames[object] { return name }
            guard case .string = try entry(object) else {
                throw ProblemThrown(.malformed("a dictionary has a key that is not a string (object \(object))"))
            }
            let name = try string(object)
            keyNames[object] = name
            return name
        }

        /// The string object `object` (ASCII or UTF-16, big-endian), which must be one.
        func string(_ object: Int) throws(ProblemThrown) -> String {
            let offset = try self.offset(of: object)
            let (count, start) = try self.count(at: offset, object: object)
            let utf16 = bytes[offset] >> 4 == 0x6
            let content = try self.content(object, start: start, count: count, unit: utf16 ? 2 : 1)
            return utf16
                ? String(
                    decoding: (0..<count).map { UInt16(content[2 * $0]) << 8 | UInt16(content[2 * $0 + 1]) },
                    as: UTF16.self)
                // Bytes above 0x7F, which no writer puts in an "ASCII" string, read as Latin-1
                // (U+0080 to U+00FF), as Foundation reads them.
                : String(String.UnicodeScalarView(content.map { Unicode.Scalar($0) }))
        }

        /// The `count` units of `unit` bytes from `start` that object `object` holds, which must
        /// end before the offset table.
        func content(_ object: Int, start: Int, count: Int, unit: Int) throws(ProblemThrown) -> UnsafeRawBufferPointer {
            let (length, overflow) = count.multipliedReportingOverflow(by: unit)
            guard !overflow, start <= end, length <= end - start else {
                throw ProblemThrown(.malformed("object \(object) runs past the objects"))
            }
            return UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
        }

        /// Records the duplicate keys of the dictionary `object` (once), whose keys start at
        /// `start`.
        mutating func examine(
            dictionary object: Int, start: Int, keys: Int, path: [String]
        ) throws(ProblemThrown) -> [String] {
            var names: [String] = []
            names.reserveCapacity(keys)
            for index in 0..<keys {
                guard let reference = integer(at: start + index * referenceSize, size: referenceSize) else {
                    throw ProblemThrown(.malformed("a reference does not fit in an integer"))
                }
                names.append(try keyName(reference))
            }
            guard examined.insert(object).inserted else { return names }
            // The first spelling of each key, one per ``KeyIdentity`` (canonically equivalent
            // spellings are one key; Foundation compares code units). The parser keeps the last
            // copy.
            var first: [String: String] = [:]
            for name in names {
                if let spelling = first[name] {
                    duplicates.append(
                        PropertyListDuplicateKey(
                            path: path, key: name, firstLine: nil, line: nil,
                            firstSpelling: spelling.utf16.elementsEqual(name.utf16) ? nil : spelling))
                } else {
                    first[name] = name
                }
            }
            return names
        }

        mutating func check() -> Problem? {
            // "bplist00", objects, the offset table, and a 32-byte trailer.
            guard bytes.count >= 8 + 32 else { return .malformed("it is shorter than a header and a trailer") }
            guard let top = readTrailer() else { return .malformed("its trailer does not describe the file") }
            do {
                return try walk(from: top)
            } catch {
                return error.problem
            }
        }

        /// Takes the sizes and the offset table's place from the trailer; returns the top
        /// object, or `nil` when the trailer does not describe the file.
        mutating func readTrailer() -> Int? {
            let trailer = bytes.count - 32
            guard let offsetSize = integer(at: trailer + 6, size: 1),
                let referenceSize = integer(at: trailer + 7, size: 1),
                let objectCount = integer(at: trailer + 8, size: 8),
                let top = integer(at: trailer + 16, size: 8),
                let offsetTable = integer(at: trailer + 24, size: 8),
                (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                offsetTable >= 8, offsetTable <= trailer,
                objectCount >= 1, objectCount <= (trailer - offsetTable) / offsetSize,
                top < objectCount
            else { return nil }
            self.offsetSize = offsetSize
            self.referenceSize = referenceSize
            self.objectCount = objectCount
            self.offsetTable = offsetTable
            end = offsetTable
            return top
        }

        /// Follows every reference from `top`, depth first, within the value budget and the
        /// nesting limit, examining each dictionary's keys on the way; the first problem found.
        private mutating func walk(from top: Int) throws(ProblemThrown) -> Problem? {
            let budget = BinaryPropertyListBounds.valueBudget(forSize: bytes.count)
            var values = 1
            // One entry per open array or dictionary: where its references start, its next
            // reference, where its keys end (a dictionary's keys come first), where its
            // references end, and a dictionary's keys.
            var stack: [(start: Int, next: Int, keysEnd: Int, end: Int, keys: [String])] = []
            // The key path of the innermost open container: one component for each but the root.
            var path: [String] = []
            func open(_ entry: Entry, object: Int) throws(ProblemThrown) {
                guard case .container(let start, let references, let keys) = entry else { return }
                let names = keys > 0 ? try examine(dictionary: object, start: start, keys: keys, path: path) : []
                stack.append(
                    (start, start, start + keys * referenceSize, start + references * referenceSize, names))
            }
            try open(try entry(top), object: top)
            while let last = stack.last {
                if last.next == last.end {
                    stack.removeLast()
                    if !stack.isEmpty { path.removeLast() }
                    continue
                }
                stack[stack.count - 1].next += referenceSize
                guard let reference = integer(at: last.next, size: referenceSize) else {
                    return .malformed("a reference does not fit in an integer")
                }
                values += 1
                if values > budget { return .tooManyValues(budget: budget) }
                let child = try entry(reference)
                if last.next < last.keysEnd, case .string = child {
                } else if last.next < last.keysEnd {
                    return .malformed("a dictionary has a key that is not a string (object \(reference))")
                }
                guard case .container = child else { continue }
                if stack.count >= BinaryPropertyListBounds.maximumNesting { return .tooDeep }
                let index = (last.next - last.keysEnd) / referenceSize
                path.append(last.keys.isEmpty ? "[\(index)]" : last.keys[index])
                try open(child, object: reference)
            }
            return nil
        }
    }

    struct ProblemThrown: Error {
        let problem: Problem
        init(_ problem: Problem) { self.problem = problem }
    }
}
