package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A configuration directory with the example's shape, removed afterwards.
package final class ExampleConfigurationDirectory {
    /// The directory, `envctl-edit-XXXXXXXX` in `NSTemporaryDirectory()`, without a trailing `/`.
    package let path: String

    /// Makes the directory with `Environments.plist` and an empty `Environments.plist.d`.
    ///
    /// - Parameter plist: The main file's contents; the example's file by default.
    /// - Throws: The error of a directory or file that cannot be made.
    package init(plist: String = examplePlist()) throws {
        path = NSTemporaryDirectory() + "envctl-edit-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(
            atPath: path + "/Environments.plist.d", withIntermediateDirectories: true)
        try plist.write(toFile: path + "/Environments.plist", atomically: true, encoding: .utf8)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of the drop-in envctl writes by default, `Environments.plist.d/90-local.plist`;
    /// it does not exist until an edit makes it.
    package var dropIn: String { path + "/Environments.plist.d/90-local.plist" }

    /// Every file's bytes, by path: what must not change after a refused edit.
    package func contents() throws -> [String: Data] {
        var all: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = path + "/" + relative
            if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                all[relative] = try Data(contentsOf: URL(fileURLWithPath: full))
            }
        }
        return all
    }
}

/// Runs envctl with no terminal (stdin from /dev/null).
package func runEnvctl(_ arguments: [String], environment extra: [String: String] = [:]) throws
    -> FinishedProcess
{
    try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment(extra))
}

/// A scripted `$EDITOR`: copies `NEW_CONTENTS` over the file it is given.
package func scriptedEditor(in directory: ExampleConfigurationDirectory) throws -> String {
    let path = directory.path + "/../editor-\(UUID().uuidString.prefix(8)).sh"
    try writeExecutableScript("#!/bin/sh\ncp \"$NEW_CONTENTS\" \"$1\"\n", to: path)
    return path
}
