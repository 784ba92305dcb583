import Environments
import Foundation
import TestSupport
import Testing

/// Binary property lists refer to their values by number, so a small file can refer to one
/// array or dictionary so many times that parsing it would never end. Such files, and those
/// nested too deeply or whose references cannot be followed, are refused before Foundation
/// parses them; every file a real writer makes still loads.
@Suite(.blocking) struct BinaryPropertyListTests {
    /// A hand-made binary property list (`bplist00`), for shapes no writer makes: references
    /// use 2 bytes, offsets 4.
    struct Builder {
        enum Object {
            case string(String)
            case integer(UInt8)
            case array([Int])
            case dictionary([(key: Int, value: Int)])
            /// Bytes as they are: a set (0xC), a UID (0x8), null (0x00).
            case raw([UInt8])
        }
        var objects: [Object] = []

        mutating func add(_ object: Object) -> Int {
            objects.append(object)
            return objects.count - 1
        }

        private static func marker(_ kind: UInt8, count: Int, into bytes: inout [UInt8]) {
            if count < 15 {
                bytes.append(kind << 4 | UInt8(count))
            } else {
                bytes += [kind << 4 | 0x0F, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
            }
        }

        func data(top: Int, objectCount: Int? = nil) -> Data {
            var bytes = Array("bplist00".utf8)
            var offsets: [Int] = []
            func reference(_ index: Int) -> [UInt8] { [UInt8(index >> 8), UInt8(index & 0xFF)] }
            for object in objects {
                offsets.append(bytes.count)
                switch object {
                case .string(let text):
                    Self.marker(0x5, count: text.utf8.count, into: &bytes)
                    bytes += Array(text.utf8)
                case .integer(let value):
                    bytes += [0x10, value]
                case .array(let elements):
                    Self.marker(0xA, count: elements.count, into: &bytes)
                    for element in elements { bytes += reference(element) }
                case .dictionary(let entries):
                    Self.marker(0xD, count: entries.count, into: &bytes)
                    for entry in entries { bytes += reference(entry.key) }
                    for entry in entries { bytes += reference(entry.value) }
                case .raw(let raw):
                    bytes += raw
                }
            }
            let table = bytes.count
            for offset in offsets {
                bytes += [
                    UInt8(offset >> 24), UInt8(offset >> 16 & 0xFF), UInt8(offset >> 8 & 0xFF), UInt8(offset & 0xFF),
                ]
            }
            func eight(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) } }
            bytes += [0, 0, 0, 0, 0, 0, 4, 2] + eight(objectCount ?? objects.count) + eight(top) + eight(table)
            return Data(bytes)
        }

        /// The file for `{Debug = {}, Common = {A = value}}` around the object `value`.
        mutating func finished(around value: Int) -> Data {
            let top = document(around: value)
            return data(top: top)
        }

        /// `{Debug = {}, Common = {A = value}}` around the object `value`.
        mutating func document(around value: Int) -> Int {
            let empty = add(.dictionary([]))
            let common = add(.dictionary([(add(.string("A")), value)]))
            return add(.dictionary([(add(.string("Debug")), empty), (add(.string("Common")), common)]))
        }
    }

    private func load(_ data: Data) throws -> Environment {
        try withTemporaryDirectory { directory in
            _ = try directory.write("Environments.plist", data: data)
            return try Environment(options: directory.options(environment: "Debug"))
        }
    }

    private func expectRefused(_ data: Data, saying reason: String) {
        let error = #expect(throws: EnvironmentError.self) { try load(data) }
        #expect(error?.code == .malformedFile, "\(error as Any)")
        #expect(error?.description.contains(reason) == true, "\(error as Any)")
        #expect(error?.file?.hasSuffix("/Environments.plist") == true, "\(error as Any)")
    }

    @Test("an array referred to twice by each of 40 arrays (2^40 values in 300 bytes) is refused")
    func doublingReferencesAreRefused() {
        for levels in [13, 40] {
            var builder = Builder()
            var value = builder.add(.string("x"))
            for _ in 0..<levels { value = builder.add(.array([value, value])) }
            let data = builder.finished(around: value)
            expectRefused(data, saying: "would expand to more than 4096 values")
        }
    }

    @Test("a dictionary shared by many keys, and a wide array of one shared dictionary, are refused")
    func wideSharingIsRefused() {
        var builder = Builder()
        let leaf = builder.add(.dictionary([(builder.add(.string("K")), builder.add(.integer(1)))]))
        let array = builder.add(.array(Array(repeating: leaf, count: 2000)))
        let data = builder.finished(around: array)
        expectRefused(data, saying: "would expand to more than")
    }

    @Test("an array that holds itself, and nesting deeper than 512 levels, are refused")
    func selfReferenceAndDepthAreRefused() {
        var looping = Builder()
        _ = looping.add(.string("x"))
        let loop = looping.add(.array([2]))  // object 2 is the array itself
        #expect(loop == 1)
        _ = looping.add(.array([0, 2]))
        expectRefused(looping.finished(around: 2), saying: "nest more than 512 levels")

        var deep = Builder()
        var value = deep.add(.string("x"))
        for _ in 0..<600 { value = deep.add(.array([value])) }
        expectRefused(deep.finished(around: value), saying: "nest more than 512 levels")
    }

    @Test("references, offsets and counts outside the file are refused, not followed")
    func brokenStructureIsRefused() {
        var builder = Builder()
        let array = builder.add(.array([60_000]))
        expectRefused(builder.finished(around: array), saying: "structure is broken")

        var counted = Builder()
        let top = counted.document(around: counted.add(.string("x")))
        expectRefused(counted.data(top: top, objectCount: 1 << 40), saying: "structure is broken")

        let truncated = Data("bplist00".utf8) + Data(repeating: 0, count: 20)
        expectRefused(truncated, saying: "structure is broken")
    }

    @Test("kinds that are no property-list value, and keys that are not strings, are refused")
    func foreignKindsAreRefused() {
        // A set (which Foundation parses, and which crashed the bridging to Swift as a
        // dictionary's key), a UID, null, fill, an unknown marker.
        for raw: [UInt8] in [[0xC1, 0x00, 0x00], [0x80, 0x01], [0x00], [0x0F], [0x70]] {
            var builder = Builder()
            let foreign = builder.add(.raw(raw))
            expectRefused(builder.finished(around: foreign), saying: "of a kind no property-list value has")
        }
        var setKey = Builder()
        let set = setKey.add(.raw([0xC0]))
        let dictionary = setKey.add(.dictionary([(set, setKey.add(.integer(1)))]))
        expectRefused(setKey.finished(around: dictionary), saying: "of a kind no property-list value has")

        var numberKey = Builder()
        let number = numberKey.add(.integer(7))
        let keyed = numberKey.add(.dictionary([(number, number)]))
        expectRefused(numberKey.finished(around: keyed), saying: "a key that is not a string")
    }

    @Test("binary files that Foundation writes load, however many values they hold")
    func foundationFilesLoad() throws {
        var settings: [String: Any] = [:]
        for index in 0..<20_000 {
            settings["Key\(index)"] = ["Host": "host-\(index % 7).example.com", "Ports": [80, 443], "On": true]
        }
        settings["Shared"] = "same"
        settings["AlsoShared"] = "same"
        let root: [String: Any] = ["Common": settings, "Debug": [String: Any]()]
        let data = try PropertyListSerialization.data(fromPropertyList: root, format: .binary, options: 0)
        #expect(data.starts(with: Array("bplist".utf8)))
        let environment = try load(data)
        #expect((try? environment.require("Key19999.Host", as: String.self)) == "host-0.example.com")
        #expect(environment.get("Key3.Ports", default: [Int]()) == [80, 443])
        #expect(environment.get("Key42.On", default: false))
        #expect((try? environment.require("AlsoShared", as: String.self)) == "same")
    }

    @Test("a hand-made file that shares only strings and numbers loads")
    func sharedScalarsLoad() throws {
        var builder = Builder()
        let one = builder.add(.integer(1))
        let text = builder.add(.string("shared"))
        let array = builder.add(.array(Array(repeating: one, count: 100) + Array(repeating: text, count: 100)))
        let environment = try load(builder.finished(around: array))
        let values = try #require(environment.fetch("A") as? [Any])
        #expect(values.count == 200)
        #expect(values.first as? Int == 1 && values.last as? String == "shared")
    }
}
