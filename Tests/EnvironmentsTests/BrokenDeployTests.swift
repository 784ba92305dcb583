import Environments
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Broken deploys are errors, never "no file": only a path that truly does not exist is absent.
/// A dangling or looping symbolic link, a file where a directory belongs, a directory where a
/// file belongs, a named directory that is missing: loading fails with the cause and the path,
/// and a reload keeps the last good configuration. (Permission errors need an unprivileged
/// process: see `BrokenDeployDaemonTests`.)
@Suite struct BrokenDeployTests {
    private let builtIn: [String: SettingValue] = ["Debug": ["Value": "built-in"]]

    private struct FixedLayer: ConfigurationSource {
        var name: String { "fleet" }
        var held: [ConfigurationDocument]
        func documents() throws(EnvironmentError) -> [ConfigurationDocument] { held }
    }

    /// Options for `directory` with a built-in configuration: the fallback a broken deploy
    /// must never silently get.
    private func options(_ directory: TemporaryDirectory) -> EnvironmentOptions {
        var options = directory.options()
        options.builtInConfiguration = builtIn
        return options
    }

    private func symlink(_ target: String, at path: String) throws {
        guard Glibc.symlink(target, path) == 0 else { throw POSIXError(.EIO) }
    }

    /// Loading fails (even with a built-in configuration to fall back on) and names `path`.
    private func expectFailure(
        _ options: EnvironmentOptions, naming path: String, saying message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = #expect(throws: EnvironmentError.self, sourceLocation: sourceLocation) {
            try Environment(options: options)
        }
        #expect(error?.description.contains(path) == true, "\(error as Any)", sourceLocation: sourceLocation)
        #expect(error?.description.contains(message) == true, "\(error as Any)", sourceLocation: sourceLocation)
    }

    @Test func aDanglingMainFileLinkIsAnErrorNotABuiltInConfiguration() throws {
        try withTemporaryDirectory { directory in
            try symlink(directory.path("releases/42/Environments.plist"), at: directory.mainFile)
            expectFailure(options(directory), naming: directory.mainFile, saying: "which does not exist")
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: options(directory)) }
            #expect(error?.code == .fileUnreadable)
            #expect(error?.description.contains("releases/42/Environments.plist") == true)
        }
    }

    @Test func aLoopOfLinksIsAnError() throws {
        try withTemporaryDirectory { directory in
            try symlink(directory.path("other.plist"), at: directory.mainFile)
            try symlink(directory.mainFile, at: directory.path("other.plist"))
            expectFailure(options(directory), naming: directory.mainFile, saying: "too many levels of symbolic links")
        }
    }

    @Test func aMainFileThatIsADirectoryIsAnError() throws {
        try withTemporaryDirectory { directory in
            try directory.makeDirectory("Environments.plist")
            expectFailure(options(directory), naming: directory.mainFile, saying: "is a directory")
        }
    }

    @Test func aConfigurationDirectoryThatIsAFileIsAnError() throws {
        try withTemporaryDirectory { directory in
            let file = try directory.write("etc", text: "not a directory")
            var options = options(directory)
            options.configDirectory = file
            expectFailure(options, naming: file, saying: "not a directory")
            // A file further up the path (ENOTDIR), not "no such directory".
            options.configDirectory = file + "/example"
            expectFailure(options, naming: file + "/example", saying: "a directory on its path is not a directory")
        }
    }

    @Test func aConfigurationDirectoryThatIsADanglingOrLoopingLinkIsAnError() throws {
        try withTemporaryDirectory { directory in
            let dangling = directory.path("current")
            try symlink(directory.path("releases/41"), at: dangling)
            var options = options(directory)
            options.configDirectory = dangling
            expectFailure(options, naming: dangling, saying: "which does not exist")

            let loop = directory.path("loop")
            try symlink(loop, at: loop)
            options.configDirectory = loop
            expectFailure(options, naming: loop, saying: "too many levels of symbolic links")
        }
    }

    @Test func brokenDropInDirectoriesAndDropInsAreErrors() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Value": "main"]])
            let dropIns = directory.path("Environments.plist.d")
            try symlink(directory.path("shared/drop-ins"), at: dropIns)
            expectFailure(options(directory), naming: dropIns, saying: "the drop-in directory is a symbolic link")

            unlink(dropIns)
            try symlink(dropIns, at: dropIns)
            expectFailure(options(directory), naming: dropIns, saying: "too many levels of symbolic links")

            unlink(dropIns)
            try directory.makeDirectory("Environments.plist.d")
            let dangling = directory.path("Environments.plist.d/50-local.plist")
            try symlink(directory.path("gone.plist"), at: dangling)
            expectFailure(options(directory), naming: dangling, saying: "which does not exist")

            unlink(dangling)
            try directory.makeDirectory("Environments.plist.d/60-dir.plist")
            expectFailure(
                options(directory), naming: directory.path("Environments.plist.d/60-dir.plist"),
                saying: "is a directory")
        }
    }

    @Test func aMissingMainFileInAnExistingDirectoryIsTheBuiltInConfiguration() throws {
        try withTemporaryDirectory { directory in
            let environment = try Environment(options: options(directory))
            #expect((try? environment.require("Value", as: String.self)) == "built-in")
        }
    }

    @Test func aNamedDirectoryThatDoesNotExistIsAnError() throws {
        try withTemporaryDirectory { directory in
            let typo = directory.path("etc/exmaple")
            var explicit = options(directory)
            explicit.configDirectory = typo
            expectFailure(
                explicit, naming: typo, saying: "the configuration directory (from --config-dir) does not exist")

            // With a base layer (fleet mode) too: the host's overrides would be silently lost.
            var fleet = explicit
            fleet.sources = [
                FixedLayer(held: [
                    ConfigurationDocument(
                        origin: "etcd:/fleet/Environments.plist", data: Data(Plist.xml(["Debug": [:]]).utf8))
                ])
            ]
            expectFailure(fleet, naming: typo, saying: "does not exist")

            // $CONFIGURATION_DIRECTORY: each directory searched must exist...
            let present = try directory.makeDirectory("present")
            var systemd = EnvironmentOptions(
                applicationName: "environments-tests", build: BuildInfo(defaultEnvironment: "Debug"),
                builtInConfiguration: builtIn, processEnvironment: ["CONFIGURATION_DIRECTORY": "\(present):\(typo)"])
            expectFailure(systemd, naming: typo, saying: "(from $CONFIGURATION_DIRECTORY) does not exist")
            // ... up to the one that holds the file: later ones are not looked at.
            try directory.writeXML(["Debug": ["Value": "present"]], to: "present/Environments.plist")
            #expect((try Environment(options: systemd).require("Value", as: String.self)) == "present")
            // All there, none holding the file: the built-in configuration.
            systemd.processEnvironment["CONFIGURATION_DIRECTORY"] = "\(try directory.makeDirectory("empty"))"
            #expect((try Environment(options: systemd).require("Value", as: String.self)) == "built-in")
        }
    }

    @Test func aReloadThatMeetsABrokenDeployKeepsTheLastGoodConfiguration() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Value": "good"]])
            let environment = try Environment(options: options(directory))
            #expect((try? environment.require("Value", as: String.self)) == "good")

            unlink(directory.mainFile)
            try symlink(directory.path("releases/43/Environments.plist"), at: directory.mainFile)
            #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect((try? environment.require("Value", as: String.self)) == "good")
            #expect(environment.generation == 1)

            // The whole (named) directory gone: rejected too.
            unlink(directory.mainFile)
            try FileManager.default.removeItem(atPath: directory.path)
            let gone = #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect(gone?.description.contains("does not exist") == true, "\(gone as Any)")
            #expect((try? environment.require("Value", as: String.self)) == "good")

            // A main file removed on purpose (the directory stays): the built-in configuration.
            try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
            #expect(try environment.reload().snapshot.files.isEmpty)
            #expect((try? environment.require("Value", as: String.self)) == "built-in")
        }
    }

    /// `/etc/<applicationName>/` is the one directory nobody named: missing at start, it is the
    /// built-in configuration; gone after the running configuration was read from it, the reload
    /// is rejected. (`/etc` is a temporary directory here: an application name cannot climb
    /// out of `/etc`.)
    @Test func theDefaultDirectoryMayBeMissingAtStartButNotVanishLater() throws {
        try withTemporaryDirectory { directory in
            let name = "etc-app"
            var options = EnvironmentOptions(
                applicationName: name, build: BuildInfo(defaultEnvironment: "Debug"), builtInConfiguration: builtIn,
                processEnvironment: [:])
            options.systemConfigurationRoot = directory.path
            #expect(ConfigurationLocation(options: options).directory == directory.path(name))
            let atStart = try Environment(options: options)
            #expect((try? atStart.require("Value", as: String.self)) == "built-in")
            #expect(atStart.snapshot.files.isEmpty)

            try directory.writeXML(["Debug": ["Value": "file"]], to: "etc-app/Environments.plist")
            #expect(try atStart.reload().snapshot.files.count == 1)
            #expect((try? atStart.require("Value", as: String.self)) == "file")

            try FileManager.default.removeItem(atPath: directory.path("etc-app"))
            let error = #expect(throws: EnvironmentError.self) { try atStart.reload() }
            #expect(error?.description.contains("no longer exists") == true, "\(error as Any)")
            #expect((try? atStart.require("Value", as: String.self)) == "file")

            // Behind an empty $CONFIGURATION_DIRECTORY, which the search falls back to once
            // /etc/<name>/ is gone: still rejected.
            var behind = options
            behind.processEnvironment["CONFIGURATION_DIRECTORY"] = try directory.makeDirectory("empty")
            try directory.writeXML(["Debug": ["Value": "file"]], to: "etc-app/Environments.plist")
            let fromDefault = try Environment(options: behind)
            #expect(fromDefault.snapshot.location?.directory == directory.path(name))
            try FileManager.default.removeItem(atPath: directory.path("etc-app"))
            #expect(throws: EnvironmentError.self) { try fromDefault.reload() }
            #expect((try? fromDefault.require("Value", as: String.self)) == "file")
        }
    }
}
