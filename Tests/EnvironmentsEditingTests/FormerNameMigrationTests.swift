import Environments
import Foundation
import TestSupport
import Testing

@testable import EnvironmentsEditing

/// ``FormerNameMigration`` on a real file: a former name renamed in the text, comments kept,
/// and a section that sets both names refused.
@Suite struct FormerNameMigrationTests {
    final class Directory {
        private let folder: TemporaryFolder
        var path: String { folder.path }
        init(_ main: String) throws {
            folder = try TemporaryFolder("editing-migration")
            try main.write(toFile: path + "/Environments.plist", atomically: true, encoding: .utf8)
        }

        var editor: DropInEditor {
            get throws {
                var options = EnvironmentOptions(applicationName: "orders", configDirectory: path)
                options.processEnvironment = [:]
                return try DropInEditor(directory: path, dropIn: nil, origin: "test", options: { options })
            }
        }
    }

    static func plist(_ common: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
            <!-- kept -->
            <key>Common</key>
            <dict>\(common)</dict>
        </dict>
        </plist>

        """
    }

    @Test("a former name is renamed in the text, its comments kept")
    func renamesInPlace() throws {
        let directory = try Directory(Self.plist("<key>LogLvl</key><string>debug</string>"))
        let editor = try directory.editor
        let files = FormerNameMigration.configurationFiles(editor)
        #expect(files == [directory.path + "/Environments.plist"])
        let rewrite = try #require(try FormerNameMigration.rewrite(files[0], [("LogLvl", "LogLevel")], editor))
        #expect(rewrite.keepsText)
        #expect(rewrite.renames.map(\.text) == ["Common.LogLvl -> Common.LogLevel"])
        let text = String(decoding: rewrite.new, as: UTF8.self)
        #expect(text.contains("<key>LogLevel</key>") && text.contains("<!-- kept -->"), "\(text)")
        // Nothing is written by the rewrite itself: migrate commits it in a transaction.
        #expect(try String(contentsOfFile: files[0], encoding: .utf8).contains("<key>LogLvl</key>"))
    }

    @Test("a section that sets the former name and the name now is a conflict, with both lines")
    func conflictIsRefused() throws {
        let directory = try Directory(
            Self.plist("<key>LogLvl</key><string>debug</string><key>LogLevel</key><string>info</string>"))
        let editor = try directory.editor
        let file = directory.path + "/Environments.plist"
        let error = #expect(throws: Failure.self) {
            try FormerNameMigration.rewrite(file, [("LogLvl", "LogLevel")], editor)
        }
        #expect(error?.description.contains("is the former name of LogLevel") ?? false, "\(String(describing: error))")
        #expect(error?.description.contains("nothing was written") ?? false)
    }
}
