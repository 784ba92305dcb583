import Foundation
import TestSupport
import Testing

/// The build-time tool behind the EmbedInfoPlist plugin, run as the plugin runs it.
@Suite("EmbedInfoPlist tool", .blocking)
struct EmbedInfoPlistToolTests {
    func run(_ plist: String) throws -> (status: Int32, output: String, generated: String?) {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "embed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("Info.plist")
        let output = directory.appendingPathComponent("EmbeddedInfoPlist.swift")
        try plist.write(to: input, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = BuiltProducts.directory.appendingPathComponent("EmbedInfoPlistTool")
        process.arguments = [input.path, output.path]
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        let text = String(decoding: readToEnd(pipe.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text, try? String(contentsOf: output, encoding: .utf8))
    }

    @Test("a valid Info.plist becomes BuildInfo.embedded with its bytes")
    func embedsBytes() throws {
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>Configuration</key><string>Staging</string></dict></plist>
            """
        let result = try run(plist)
        #expect(result.status == 0)
        let generated = try #require(result.generated)
        #expect(generated.contains("static let embedded: BuildInfo"))
        // The first bytes of "<?xml" are embedded.
        #expect(generated.contains("0x3c, 0x3f, 0x78, 0x6d, 0x6c"))
    }

    @Test("an invalid Info.plist fails the build with the file and the reason")
    func rejectsBadPlist() throws {
        let result = try run(
            "<plist><dict><key>AllowedEnvironments</key><string>Release</string></dict></plist>")
        #expect(result.status == 1)
        #expect(result.output.contains("Info.plist: error:"))
        #expect(result.output.contains("'AllowedEnvironments' is a string, expected an array of strings"))
        #expect(result.generated == nil)
    }
}
