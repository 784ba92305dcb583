import Environments
import Foundation
import Testing

@testable import EnvironmentsEditing

/// ``DropInDocument``: a drop-in read with the daemon's parsers and written as Foundation writes
/// it, so that rewriting a drop-in Foundation wrote changes nothing but what was set.
struct DropInDocumentTests {
    nonisolated(unsafe) static let root: [String: Any] = [
        "Common": [
            "Host": "db.example.com", "Port": 5432, "Ratio": 0.25, "Debug": true,
            "Since": Date(timeIntervalSinceReferenceDate: 86_400), "Blob": Data([0, 1, 2, 250]),
            "Tags": ["a & b", "<c>"], "Empty": [String: Any](),
        ] as [String: Any],
        "Release": ["Upstreams": ["api.example.com": ["Port": 443]]],
    ]

    @Test("writes what Foundation writes, and reads it back as the same values")
    func roundTrip() throws {
        let written = try DropInDocument.data(Self.root)
        #expect(written == (try PropertyListSerialization.data(fromPropertyList: Self.root, format: .xml, options: 0)))
        let read = try DropInDocument.root(written, path: "50-local.plist")
        #expect(SettingValue(propertyList: read) == SettingValue(propertyList: Self.root))
        // Rewritten unchanged, byte for byte.
        #expect(try DropInDocument.data(read) == written)
    }

    @Test("reads binary drop-ins, as the daemon does")
    func binary() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: Self.root, format: .binary, options: 0)
        let read = try DropInDocument.root(data, path: "50-local.plist")
        #expect(SettingValue(propertyList: read) == SettingValue(propertyList: Self.root))
    }

    @Test("a drop-in that is no property list, or whose root is no dictionary, is refused with what to do")
    func refused() throws {
        let broken = Data("<plist version=\"1.0\">\n<dict>\n<key>A</key><strin>x</string>\n</dict>\n</plist>\n".utf8)
        #expect {
            try DropInDocument.root(broken, path: "50-local.plist")
        } throws: { error in
            let failure = try #require(error as? Failure)
            return failure.description.hasPrefix("50-local.plist: not a property list (line 3: ")
                && failure.description.hasSuffix("); fix it with envctl edit") && failure.line == 3
                && !failure.description.contains("not a valid property list")
        }
        let array = Data("<plist version=\"1.0\"><array/></plist>".utf8)
        #expect {
            try DropInDocument.root(array, path: "50-local.plist")
        } throws: { error in
            (error as? Failure)?.description == "50-local.plist: the root is not a dictionary; fix it with envctl edit"
        }
        #expect(try DropInDocument.root(nil, path: "new.plist").isEmpty)
    }

    @Test("a value no property list holds is refused, not written")
    func unwritable() throws {
        #expect(throws: Failure.self) { try DropInDocument.data(["Common": ["Bad": UUID()]]) }
    }
}
