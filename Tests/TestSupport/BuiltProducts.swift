package import Foundation

/// Where the package's executables are: beside the test bundle in the build directory.
package enum BuiltProducts {
    /// The build directory that holds the test bundle and the executables.
    package static var directory: URL {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("example-daemon").path) {
                return url
            }
        }
        return URL(fileURLWithPath: ".build/debug")
    }
    /// The example daemon.
    package static var exampleDaemon: String {
        directory.appendingPathComponent("example-daemon").path
    }
    /// envctl.
    package static var envctl: String { directory.appendingPathComponent("envctl").path }
}
