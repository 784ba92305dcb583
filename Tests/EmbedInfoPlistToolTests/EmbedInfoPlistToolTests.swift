import Foundation
import TestSupport
import Testing

/// The build-time tool behind the EmbedInfoPlist plugin, run as the plugin runs it.
@Suite("EmbedInfoPlist tool", .blocking)
struct EmbedInfoPlistToolTests {
    func run(_ plist: String) throws -> (status: Int32, output: String, generated: String?) {
        try run(Data(plist.utf8))
    }

    func run(_ plist: Data) throws -> (status: Int32, output: String, generated: String?) {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "embed-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("Info.plist")
        let output = directory.appendingPathComponent("EmbeddedInfoPlist.swift")
        try plist.write(to: input)
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

    // The tool reads with the library's own reader (BuildInfo(infoPlist:) and the parsers,
    // compiled from the same files), so it refuses what a daemon would refuse at start, and
    // says so as the library does.

    @Test("a malformed Info.plist fails the build with the line, as the library reports it")
    func reportsLine() throws {
        let result = try run(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
                <key>Configuration</key><strin>Staging</string>
            </dict></plist>
            """)
        #expect(result.status == 1)
        #expect(result.output.contains("Info.plist: error: embedded Info.plist:4: not a valid property list"))
        #expect(result.output.contains("unknown element <strin>"))
        #expect(result.generated == nil)
    }

    @Test("a per-build AllowedEnvironments is checked for both Debug and Release")
    func checksBothBuilds() throws {
        let result = try run(
            """
            <plist><dict><key>AllowedEnvironments</key><dict>
            <key>Debug</key><array/><key>Release</key><string>Production</string>
            </dict></dict></plist>
            """)
        #expect(result.status == 1)
        #expect(result.output.contains("'AllowedEnvironments.Release' must be an array of strings"))
    }

    @Test("a binary Info.plist is read and embedded")
    func embedsBinary() throws {
        let plist = try PropertyListSerialization.data(
            fromPropertyList: ["Configuration": "Staging", "AllowedEnvironments": ["Staging", "Production"]],
            format: .binary, options: 0)
        let result = try run(plist)
        #expect(result.status == 0, "\(result.output)")
        let generated = try #require(result.generated)
        // "bplist00", the binary format's magic, is embedded.
        #expect(generated.contains("0x62, 0x70, 0x6c, 0x69, 0x73, 0x74, 0x30, 0x30"))
    }
}
