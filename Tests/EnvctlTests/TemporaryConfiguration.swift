import Foundation

/// A temporary root holding a configuration directory (`etc`) with its `Environments.plist`,
/// removed afterwards: the part every suite's `Files` shares; each adds the files of its own
/// (a schema, units, credentials) beside it.
class TemporaryConfiguration {
    let root: String
    var configDirectory: String { root + "/etc" }
    var mainFile: String { configDirectory + "/Environments.plist" }

    /// Makes `envctl-NAME-XXXXXXXX` in the temporary directory, with `etc` and the
    /// `directories` below it (paths relative to the root), and writes `plist` as the main file.
    init(_ name: String, plist: String, directories: [String] = []) throws {
        root = NSTemporaryDirectory() + "envctl-\(name)-\(UUID().uuidString.prefix(8))"
        for directory in [configDirectory] + directories.map({ root + "/" + $0 }) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try writeMainFile(plist)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Replaces the main file's text.
    func writeMainFile(_ plist: String) throws {
        try plist.write(toFile: mainFile, atomically: true, encoding: .utf8)
    }
}
