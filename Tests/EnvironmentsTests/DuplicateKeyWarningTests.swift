import Environments
import Foundation
import TestSupport
import Testing

/// A key written twice in one dictionary keeps its last copy, as Apple's and Python's readers
/// do, but never silently: a warning names both lines, and strictness makes it an error.
@Suite struct DuplicateKeyWarningTests {
    static let twice = plistDocument(
        """
            <key>Common</key>
            <dict>
                <key>ListenPort</key><integer>80</integer>
                <key>ListenPort</key><integer>81</integer>
            </dict>
            <key>Debug</key>
            <dict><key>A</key><string>first</string></dict>
            <key>Debug</key>
            <dict><key>B</key><string>second</string></dict>
        """)

    @Test("the last copy is used, and a warning names the key and both lines")
    func warnings() throws {
        try withTemporaryDirectory { directory in
            let file = try directory.write("Environments.plist", text: Self.twice)
            let environment = try Environment(options: directory.options())
            #expect(environment.get("ListenPort", default: 0) == 81)
            // A section written twice: the second replaces the first whole, as in plistlib.
            #expect((try? environment.require("B", as: String.self)) == "second")
            #expect((try? environment.require("A", as: String.self)) == nil)
            let warnings = environment.snapshot.warnings
            #expect(warnings.count == 2, "\(warnings)")
            let port = try #require(warnings.first { $0.key == "ListenPort" })
            #expect(port.code == .duplicateKey)
            #expect(port.file == file)
            #expect(port.line == 7)
            #expect(port.message.contains("on line 6 and again on line 7"), "\(port)")
            #expect(port.description.hasPrefix("\(file):7: 'Common' > 'ListenPort'"), "\(port)")
            #expect(warnings.contains { $0.message.contains("'Debug'") && $0.line == 11 }, "\(warnings)")
        }
    }

    @Test("with warningsAreErrors the load fails, and a reload keeps the last good configuration")
    func strict() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["ListenPort": 80], "Debug": [:]])
            var options = directory.options()
            options.warningsAreErrors = true
            let environment = try Environment(options: options)
            let file = try directory.write("Environments.plist", text: Self.twice)
            let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error.code == .strictWarning)
            #expect(error.file == file)
            #expect(error.line == 7)
            #expect(error.message.contains("and 1 more warnings"), "\(error)")
            #expect(environment.get("ListenPort", default: 0) == 80)
            #expect(throws: EnvironmentError.self) { try Environment(options: options) }
        }
    }

    @Test("fixing a duplicate that changes no value is applied, so the warning goes away")
    func fixingClearsTheWarning() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: Self.twice)
            let environment = try Environment(options: directory.options())
            #expect(!environment.snapshot.warnings.isEmpty)
            try directory.writeXML(["Common": ["ListenPort": 81], "Debug": ["B": "second"]])
            try environment.reload()
            #expect(environment.snapshot.warnings.isEmpty)
            #expect(environment.get("ListenPort", default: 0) == 81)
        }
    }
}
