import Environments
import Foundation
import Testing

/// A drop-in that sets nothing is not a new configuration: adding or removing one leaves the
/// generation alone (no observer, no "changed:" line with nothing after it).
@Suite("Drop-ins that set nothing")
struct EmptyDropInTests {
    private static let main = """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
            <key>Common</key><dict><key>APIHost</key><string>api.example.com</string></dict>
            <key>Production</key><dict/>
        </dict></plist>
        """

    private static func dropIn(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>\(body)</dict></plist>
        """
    }

    @Test("adding and removing an empty drop-in is unchanged; one that sets a value is applied")
    func emptyDropIn() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("empty-drop-in-\(UUID())")
        let dropIns = directory.appendingPathComponent("Environments.plist.d")
        try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.main.write(
            to: directory.appendingPathComponent("Environments.plist"), atomically: true, encoding: .utf8)
        let environment = try Environment(
            options: EnvironmentOptions(
                applicationName: "empty-drop-in", environment: "Production", configDirectory: directory.path,
                processEnvironment: [:]))
        let generation = environment.generation

        // Empty, then with an empty section: nothing set either way.
        let empty = dropIns.appendingPathComponent("50-empty.plist")
        for body in ["", "<key>Common</key><dict/>"] {
            try Self.dropIn(body).write(to: empty, atomically: true, encoding: .utf8)
            guard case .unchanged = try environment.reload() else {
                Issue.record("adding a drop-in that sets nothing (\(body)) made a new configuration")
                return
            }
            #expect(environment.generation == generation)
        }
        try FileManager.default.removeItem(at: empty)
        guard case .unchanged = try environment.reload() else {
            Issue.record("removing a drop-in that set nothing made a new configuration")
            return
        }
        #expect(environment.generation == generation)

        // One that sets a value is a change, as ever.
        try Self.dropIn("<key>Common</key><dict><key>APIHost</key><string>other.example.com</string></dict>")
            .write(to: empty, atomically: true, encoding: .utf8)
        guard case .applied(let change) = try environment.reload() else {
            Issue.record("a drop-in that sets a value was not applied")
            return
        }
        #expect(change.changedKeys == ["APIHost"])
        #expect(environment.generation == generation + 1)
        #expect(environment.snapshot.files.contains(empty.path))
    }
}
