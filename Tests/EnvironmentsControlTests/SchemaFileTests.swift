import EnvironmentsControl
import Foundation
import Testing

/// `SchemaFile`, which `envctl check --schema` and `envctl publish --schema` (envctl-fleet) both
/// read through: a declaration, and the sentences either tool prints when there is none.
@Suite("a --schema file")
struct SchemaFileTests {
    /// A directory of its own, removed after `body`.
    static func withDirectory(_ body: (String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "schema-file-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory)
    }

    @Test("a JSON Schema document is read as a declaration")
    func reads() throws {
        try Self.withDirectory { directory in
            let path = directory + "/schema.json"
            try #"{"properties": {"ListenPort": {"type": "integer"}}}"#.write(
                toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: Never.self) { try SchemaFile.declaration(at: path) }
        }
    }

    @Test("a file that is not a declaration fails with its path and the reason")
    func notADeclaration() throws {
        try Self.withDirectory { directory in
            let path = directory + "/schema.json"
            try #"{"properties": {"ListenPort": {"type": "integer", "minimum": "one"}}}"#.write(
                toFile: path, atomically: true, encoding: .utf8)
            let error = #expect(throws: SchemaFileError.self) { try SchemaFile.declaration(at: path) }
            #expect(
                error?.description
                    == "\(path): invalid settings schema at /properties/ListenPort: minimum is not a number")
        }
    }

    @Test("a file that cannot be read fails with the file named")
    func unreadable() throws {
        try Self.withDirectory { directory in
            let path = directory + "/none.json"
            let error = #expect(throws: SchemaFileError.self) { try SchemaFile.declaration(at: path) }
            #expect(error?.description.hasPrefix("cannot read the schema file: \(path)") == true)
        }
    }
}
