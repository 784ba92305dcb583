#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes a binary property list (`bplist00`) into setting values, without Foundation's
/// `PropertyListSerialization`.
///
/// Only a file that ``BinaryPropertyListBounds`` accepted is decoded: its references, counts
/// and offsets are known to stay inside the file, its nesting is at most
/// ``BinaryPropertyListBounds/maximumNesting`` levels and its values, counted once per
/// reference, at most its budget, so decoding takes time and memory in proportion to the
/// file's size.
///
/// The values are those Apple's and Python's readers make: booleans; integers of 1, 2 and 4
/// bytes (unsigned), 8 bytes (signed) and 16 bytes (signed; a setting's integer holds those
/// that fit in `Int`); 4- and 8-byte reals; dates (seconds since 2001-01-01); data; ASCII and
/// UTF-16 strings; arrays; dictionaries. A key written more than once in one dictionary keeps
/// its last copy's value and spelling, as in XML files.
enum BinaryPropertyListParser {
    /// Why a file that ``BinaryPropertyListBounds`` accepted still makes no configuration.
    enum Failure: Error, Equatable {
        /// A value no setting can hold: its key path (array elements as `[index]`) and why.
        case unsupportedValue(path: [String], reason: String)
        /// The structure breaks a rule; the problem says which.
        case malformed(BinaryPropertyListBounds.Problem)
    }

    /// The root value of `data`, a binary property list that ``BinaryPropertyListBounds``
    /// accepted.
    static func parse(_ data: Data) throws(Failure) -> SettingValue {
        let result: Result<SettingValue, Failure> = data.withUnsafeBytes { buffer in
            var reader = BinaryPropertyListBounds.Reader(bytes: buffer)
            guard buffer.count >= 8 + 32, let top = reader.readTrailer() else {
                return .failure(.malformed(.malformed("its trailer does not describe the file")))
            }
            var path: [String] = []
            do throws(Failure) {
                return .success(try reader.value(top, path: &path))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension BinaryPropertyListBounds.Reader {
    /// The value of object `object`, whose key path is `path` (restored on return).
    fileprivate func value(_ object: Int, path: inout [String]) throws(BinaryPropertyListParser.Failure)
        -> SettingValue
    {
        do {
            let offset = try self.offset(of: object)
            let marker = bytes[offset]
            switch marker >> 4 {
            case 0x0 where marker == 0x08 || marker == 0x09:
                return .bool(marker == 0x09)
            case 0x1:
                return try integer(object, at: offset, path: path)
            case 0x2 where marker == 0x22:
                return .real(Double(Float(bitPattern: UInt32(truncatingIfNeeded: try bits(at: offset + 1, size: 4)))))
            case 0x2 where marker == 0x23:
                return .real(Double(bitPattern: try bits(at: offset + 1, size: 8)))
            case 0x3 where marker == 0x33:
                return .date(
                    Date(timeIntervalSinceReferenceDate: Double(bitPattern: try bits(at: offset + 1, size: 8))))
            case 0x4:
                let (count, start) = try self.count(at: offset, object: object)
                return .data(Data(try content(object, start: start, count: count, unit: 1)))
            case 0x5, 0x6:
                return .string(try string(object))
            case 0xA:
                let (count, start) = try self.count(at: offset, object: object)
                var elements: [SettingValue] = []
                elements.reserveCapacity(count)
                for index in 0..<count {
                    path.append("[\(index)]")
                    elements.append(try value(try reference(at: start + index * referenceSize), path: &path))
                    path.removeLast()
                }
                return .array(elements)
            case 0xD:
                return try dictionary(object, at: offset, path: &path)
            default:
                throw BinaryPropertyListParser.Failure.malformed(
                    .malformed(
                        "object \(object) is of a kind no property-list value has (marker 0x\(String(marker, radix: 16)))"
                    ))
            }
        } catch let thrown as BinaryPropertyListBounds.ProblemThrown {
            throw .malformed(thrown.problem)
        } catch let failure as BinaryPropertyListParser.Failure {
            throw failure
        } catch {
            throw .malformed(.malformed("\(error)"))
        }
    }

    /// A dictionary: its keys come first, then its values. A key written twice keeps its last
    /// copy (spelling and value).
    private func dictionary(_ object: Int, at offset: Int, path: inout [String]) throws -> SettingValue {
        let (count, start) = try self.count(at: offset, object: object)
        var entries: [String: SettingValue] = [:]
        entries.reserveCapacity(count)
        for index in 0..<count {
            let key = try string(try reference(at: start + index * referenceSize))
            path.append(key)
            let element = try value(try reference(at: start + (count + index) * referenceSize), path: &path)
            path.removeLast()
            // Removed first, so that the last copy's spelling is the one kept (a `String` key
            // compares canonically equivalent spellings as equal).
            entries.removeValue(forKey: key)
            entries[key] = element
        }
        return .dictionary(entries)
    }

    /// An integer object: 1, 2 and 4 bytes are unsigned, 8 and 16 bytes signed (two's
    /// complement, big-endian), as Apple's writer makes them.
    private func integer(_ object: Int, at offset: Int, path: [String]) throws -> SettingValue {
        let size = 1 << Int(bytes[offset] & 0x0F)
        switch size {
        case 1, 2, 4:
            return .integer(Int(try bits(at: offset + 1, size: size)))
        case 8:
            return .integer(Int(Int64(bitPattern: try bits(at: offset + 1, size: 8))))
        case 16:
            let high = try bits(at: offset + 1, size: 8)
            let low = try bits(at: offset + 9, size: 8)
            let value = Int128(bitPattern: UInt128(high) << 64 | UInt128(low))
            guard let exact = Int(exactly: value) else {
                throw BinaryPropertyListParser.Failure.unsupportedValue(
                    path: path,
                    reason: "the integer \(value), outside the range of a setting's integers (\(Int.min) to \(Int.max))"
                )
            }
            return .integer(exact)
        default:
            throw BinaryPropertyListParser.Failure.malformed(
                .malformed("object \(object) is an integer of \(size) bytes (1, 2, 4, 8 or 16)"))
        }
    }

    /// The `size` bytes at `offset`, big-endian, which must end before the offset table.
    private func bits(at offset: Int, size: Int) throws(BinaryPropertyListBounds.ProblemThrown) -> UInt64 {
        guard offset <= end - size else {
            throw BinaryPropertyListBounds.ProblemThrown(.malformed("a value at \(offset) runs past the objects"))
        }
        var value: UInt64 = 0
        for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    /// The object number a reference at `offset` holds.
    private func reference(at offset: Int) throws(BinaryPropertyListBounds.ProblemThrown) -> Int {
        guard let reference = integer(at: offset, size: referenceSize) else {
            throw BinaryPropertyListBounds.ProblemThrown(.malformed("a reference does not fit in an integer"))
        }
        return reference
    }
}
