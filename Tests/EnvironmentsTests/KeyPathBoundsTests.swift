import Environments
import Foundation
import TestSupport
import Testing

/// Every path is bounded (``SettingPath``'s depth, component and length caps, and the bytes of
/// all of a file's paths together) wherever it is made: dotted keys, nested dictionaries, both
/// at once, binary property lists, variables, overrides. Past a bound, the file is refused with
/// the key, the file and the line, and a running environment keeps its last good values.
@Suite(.blocking) struct KeyPathBoundsTests {
    static let depth = SettingPath.maximumDepth

    /// `components` joined as a dotted key.
    static func dotted(_ count: Int, name: String = "K") -> String {
        (0..<count).map { "\(name)\($0 % 10)" }.joined(separator: ".")
    }

    /// A dictionary nested `count` levels deep around `leaf`.
    static func nested(_ count: Int, leaf: Any) -> Any {
        var value = leaf
        for level in 0..<count { value = ["N\(level % 10)": value] }
        return value
    }

    @Test("a very deep dotted key in a drop-in is a rejected reload naming the file and line; nothing crashes")
    func deepDottedKeyInADropIn() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["ListenPort": 80], "Debug": [:]])
            let environment = try Environment(options: directory.options())
            // A few kilobytes: once a stack overflow in recursive tree code.
            for count in [Self.depth + 1, 2_000, 100_000] {
                let file = try directory.writeXML(
                    ["Common": [Self.dotted(count): 1, "ListenPort": 81]], to: "Environments.plist.d/10-deep.plist")
                let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
                #expect(error.code == .invalidKey, "\(error)")
                #expect(error.file == file)
                #expect(error.line != nil)
                #expect(error.description.utf8.count < 2_000, "the key is shown shortened")
                #expect(environment.get("ListenPort", default: 0) == 80)
                // A `Check` of the same candidate (what envctl edit and set send) fails the same way.
                #expect(throws: EnvironmentError.self) { try environment.check() }
            }
            try directory.writeXML(
                ["Common": [Self.dotted(Self.depth): 1, "ListenPort": 81]], to: "Environments.plist.d/10-deep.plist")
            try environment.reload()
            #expect(environment.get(Self.dotted(Self.depth), default: 0) == 1)
            #expect(environment.get("ListenPort", default: 0) == 81)
        }
    }

    @Test("nesting and dotted keys count together, in XML and binary files")
    func nestingAndDotsCountTogether() throws {
        try withTemporaryDirectory { directory in
            for binary in [false, true] {
                for (dots, nesting, accepted) in [
                    (1, Self.depth - 1, true), (1, Self.depth, false), (30, 34, true), (30, 35, false),
                ] {
                    // The key at the top has `dots` components, then `nesting` dictionaries.
                    let root: [String: Any] = [
                        "Common": [Self.dotted(dots, name: "D"): Self.nested(nesting - 1, leaf: ["Leaf": 1])],
                        "Debug": [:],
                    ]
                    if binary { try directory.writeBinary(root) } else { try directory.writeXML(root) }
                    let result = Result { () throws(EnvironmentError) in try Environment(options: directory.options()) }
                    switch result {
                    case .success: #expect(accepted, "\(dots) + \(nesting), binary \(binary)")
                    case .failure(let error):
                        #expect(!accepted, "\(dots) + \(nesting), binary \(binary): \(error)")
                        #expect(error.code == .invalidKey)
                        #expect(error.message.contains("\(Self.depth)"), "\(error)")
                        if !binary { #expect(error.line != nil, "\(error)") }
                    }
                }
            }
        }
    }

    @Test("a component or a path past its length is refused")
    func lengths() throws {
        let long = String(repeating: "x", count: SettingPath.maximumComponentBytes)
        #expect(try Environment(values: ["A": [long: 1]]).get("A." + long, default: 0) == 1)
        let error = try #require(throws: EnvironmentError.self) {
            try Environment(values: ["A": [long + "x": 1]])
        }
        #expect(error.code == .invalidKey)
        #expect(error.message.contains("\(SettingPath.maximumComponentBytes)"))
        // Five components of 1,000 bytes: past the path's length.
        let thousand = String(repeating: "y", count: 1_000)
        let tooLong = Array(repeating: thousand, count: 5)
        #expect(throws: EnvironmentError.self) { try SettingPath(components: tooLong) }
        #expect(throws: EnvironmentError.self) { try Environment(values: [tooLong.joined(separator: "."): 1]) }
        #expect(throws: EnvironmentError.self) {
            try Environment(values: [thousand: [thousand: [thousand: [thousand: [thousand: 1]]]]])
        }
    }

    @Test("a binary file that names one long key thousands of times is refused for the bytes of its paths")
    func totalPathBytes() throws {
        try withTemporaryDirectory { directory in
            // Binary property lists share equal strings: 25,000 paths of about 3 KB each from a
            // file of a few hundred kilobytes.
            let long = String(repeating: "k", count: 1_000)
            var leaves: [String: Any] = [:]
            for index in 0..<25_000 { leaves["v\(index)"] = 1 }
            let file = try directory.writeBinary([
                "Common": ["\(long)a": ["\(long)b": ["\(long)c": leaves]]], "Debug": [:],
            ])
            let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
            #expect(size < 1 << 20, "\(size) bytes")
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error.code == .invalidKey)
            #expect(error.message.contains("MiB together"), "\(error)")
            #expect(error.file == file)
        }
    }

    @Test("a variable with too many levels, or too long a level, is an error naming it")
    func variables() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": 1], "Debug": [:]])
            let deep = "APP_" + (0...Self.depth).map { "L\($0)" }.joined(separator: "__")
            let long = "APP_A__" + String(repeating: "Z", count: SettingPath.maximumComponentBytes + 1)
            let huge = "APP_" + Array(repeating: "Q", count: 50_000).joined(separator: "__")
            for name in [deep, long, huge] {
                let error = try #require(throws: EnvironmentError.self) {
                    try Environment(options: directory.options(processEnvironment: [name: "1"]))
                }
                #expect(error.code == .invalidKey, "\(error)")
                #expect(error.message.contains("names no key"), "\(error)")
                #expect(error.description.utf8.count < 2_000)
            }
            let fine = "APP_" + (0..<Self.depth).map { "L\($0)" }.joined(separator: "__")
            let environment = try Environment(options: directory.options(processEnvironment: [fine: "1"]))
            #expect(
                (try? environment.require((0..<Self.depth).map { "L\($0)" }.joined(separator: "."), as: String.self))
                    == "1"
            )
        }
    }

    @Test("thousands of variables at one level load, each applied")
    func manyVariables() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Map": ["Existing": 1]], "Debug": [:]])
            var variables: [String: String] = [:]
            for index in 0..<5_000 { variables["APP_Map__Key\(index)"] = "\(index)" }
            // Upper-case spellings of existing keys, matched ignoring case.
            variables["APP_MAP__EXISTING"] = "2"
            let environment = try Environment(options: directory.options(processEnvironment: variables))
            #expect((try? environment.require("Map.Key4999", as: String.self)) == "4999")
            #expect(environment.get("Map.Existing", default: 0) == 2)
            #expect(environment.snapshot.leafKeys.count == 5_001)
        }
    }
}
