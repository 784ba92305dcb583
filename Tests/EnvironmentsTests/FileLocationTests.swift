import Environments
import Foundation
import Testing

/// Where files are found: an explicit directory, `$CONFIGURATION_DIRECTORY`, `/etc/<name>/`;
/// XML and binary property lists; drop-ins.
@Suite struct FileLocationTests {
    private let sample: [String: Any] = [
        "Common": ["Greeting": "hello", "Port": 8080, "Ratio": 0.5, "Enabled": true],
        "Debug": ["Greeting": "hello debug", "Tags": ["a", "b"]],
    ]

    @Test func readsAnXMLFileFromTheExplicitDirectory() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(sample)
            let environment = try Environment(options: directory.options())
            #expect((try? environment.require("Greeting", as: String.self)) == "hello debug")
            #expect(environment.fetch("Port") as? Int == 8080)
            #expect(environment.fetch("Ratio") as? Double == 0.5)
            #expect(environment.fetch("Enabled") as? Bool == true)
            #expect(environment.fetch("Tags") as? [String] == ["a", "b"])
            #expect(environment.snapshot.files == [directory.mainFile])
            #expect(environment.snapshot.location?.directory == directory.path)
            #expect(environment.snapshot.location?.mainFile == directory.mainFile)
            #expect(environment.snapshot.location?.dropInDirectory == directory.mainFile + ".d")
        }
    }

    @Test func readsABinaryFile() throws {
        try withTemporaryDirectory { directory in
            try directory.writeBinary(sample)
            let head = try Data(contentsOf: URL(fileURLWithPath: directory.mainFile)).prefix(6)
            #expect(String(decoding: head, as: UTF8.self) == "bplist")
            let environment = try Environment(options: directory.options())
            #expect(environment.value(forKey: "Greeting") == .string("hello debug"))
            #expect(environment.value(forKey: "Port") == .integer(8080))
            #expect(environment.value(forKey: "Ratio") == .real(0.5))
            #expect(environment.value(forKey: "Enabled") == .bool(true))
            #expect(environment.value(forKey: "Tags") == .array(["a", "b"]))
        }
    }

    @Test func usesConfigurationDirectory() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(sample)
            let options = EnvironmentOptions(
                applicationName: "environments-tests", build: BuildInfo(defaultEnvironment: "Debug"),
                processEnvironment: ["CONFIGURATION_DIRECTORY": directory.path])
            let environment = try Environment(options: options)
            #expect((try? environment.require("Greeting", as: String.self)) == "hello debug")
            #expect(environment.snapshot.files == [directory.mainFile])
        }
    }

    @Test func usesTheFirstConfigurationDirectoryThatHoldsTheFile() throws {
        try withTemporaryDirectory { directory in
            let empty = try directory.makeDirectory("empty")
            try directory.writeXML(["Debug": ["Which": "second"]], to: "second/Environments.plist")
            try directory.writeXML(["Debug": ["Which": "third"]], to: "third/Environments.plist")
            let options = EnvironmentOptions(
                applicationName: "environments-tests", build: BuildInfo(defaultEnvironment: "Debug"),
                processEnvironment: [
                    "CONFIGURATION_DIRECTORY": "\(empty):\(directory.path("second")):\(directory.path("third"))"
                ])
            let environment = try Environment(options: options)
            #expect((try? environment.require("Which", as: String.self)) == "second")
            #expect(environment.snapshot.files == [directory.path("second/Environments.plist")])

            let location = ConfigurationLocation(options: options)
            #expect(location.directory == directory.path("second"))
            #expect(
                location.searchedDirectories == [
                    empty, directory.path("second"), directory.path("third"), "/etc/environments-tests",
                ])
        }
    }

    @Test func explicitDirectoryWinsOverConfigurationDirectory() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Which": "explicit"]], to: "explicit/Environments.plist")
            try directory.writeXML(["Debug": ["Which": "systemd"]], to: "systemd/Environments.plist")
            let options = EnvironmentOptions(
                applicationName: "environments-tests", configDirectory: directory.path("explicit"),
                build: BuildInfo(defaultEnvironment: "Debug"),
                processEnvironment: ["CONFIGURATION_DIRECTORY": directory.path("systemd")])
            let environment = try Environment(options: options)
            #expect((try? environment.require("Which", as: String.self)) == "explicit")
            #expect(ConfigurationLocation(options: options).searchedDirectories == [directory.path("explicit")])
        }
    }

    @Test func fallsBackToEtcApplicationName() {
        let options = EnvironmentOptions(applicationName: "no-such-app-\(UUID().uuidString)", processEnvironment: [:])
        let location = ConfigurationLocation(options: options)
        #expect(location.directory == "/etc/\(options.applicationName)")
        #expect(location.mainFile == "/etc/\(options.applicationName)/Environments.plist")
        #expect(location.dropInDirectory == "/etc/\(options.applicationName)/Environments.plist.d")
        #expect(location.searchedDirectories == ["/etc/\(options.applicationName)"])

        let error = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
        #expect(error?.code == .fileNotFound)
        #expect(error?.searchedFiles == ["/etc/\(options.applicationName)/Environments.plist"])
    }

    @Test func customFileName() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Which": "settings"]], to: "Settings.plist")
            try directory.writeXML(["Debug": ["Extra": "drop-in"]], to: "Settings.plist.d/10.plist")
            var options = directory.options()
            options.fileName = "Settings.plist"
            let environment = try Environment(options: options)
            #expect((try? environment.require("Which", as: String.self)) == "settings")
            #expect((try? environment.require("Extra", as: String.self)) == "drop-in")
        }
    }

    @Test func dropInsApplyInLexicalOrder() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Order": "main", "Main": "yes"]])
            try directory.writeXML(["Debug": ["Order": "9", "Nine": "yes"]], to: "Environments.plist.d/9-last.plist")
            try directory.writeXML(["Debug": ["Order": "10", "Ten": "yes"]], to: "Environments.plist.d/10-first.plist")
            try directory.writeXML(["Debug": ["Order": "20"]], to: "Environments.plist.d/20-second.plist")
            try directory.writeXML(["Debug": ["Case": "B"]], to: "Environments.plist.d/B-upper.plist")
            try directory.writeXML(["Debug": ["Case": "a"]], to: "Environments.plist.d/a-lower.plist")
            let environment = try Environment(options: directory.options())
            let dropIns = ["10-first", "20-second", "9-last", "B-upper", "a-lower"].map {
                directory.path("Environments.plist.d/\($0).plist")
            }
            #expect(environment.snapshot.files == [directory.mainFile] + dropIns)
            #expect(try ConfigurationLocation(options: directory.options()).dropInFiles() == dropIns)
            #expect((try? environment.require("Order", as: String.self)) == "9")
            #expect((try? environment.require("Case", as: String.self)) == "a")
            #expect((try? environment.require("Main", as: String.self)) == "yes")
            #expect((try? environment.require("Ten", as: String.self)) == "yes")
            #expect((try? environment.require("Nine", as: String.self)) == "yes")
        }
    }

    @Test func otherNamesAndHiddenFilesInTheDropInDirectoryAreIgnored() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Value": "main"]])
            let broken = "this is not a property list"
            try directory.write("Environments.plist.d/.hidden.plist", text: broken)
            try directory.write("Environments.plist.d/README", text: broken)
            try directory.write("Environments.plist.d/50-old.plist.bak", text: broken)
            try directory.write("Environments.plist.d/50-editor.plist~", text: broken)
            try directory.write("Environments.plist.d/50.conf", text: broken)
            try directory.writeXML(["Debug": ["Value": "drop-in"]], to: "Environments.plist.d/60-real.plist")
            let environment = try Environment(options: directory.options())
            #expect((try? environment.require("Value", as: String.self)) == "drop-in")
            #expect(
                environment.snapshot.files == [
                    directory.mainFile, directory.path("Environments.plist.d/60-real.plist"),
                ])
        }
    }

    @Test func binaryDropIn() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Value": "main"]])
            try directory.writeBinary(["Debug": ["Value": "binary"]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(options: directory.options())
            #expect((try? environment.require("Value", as: String.self)) == "binary")
        }
    }

    @Test func emptyOrMissingDropInDirectory() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Value": "main"]])
            #expect(try ConfigurationLocation(options: directory.options()).dropInFiles().isEmpty)
            try directory.makeDirectory("Environments.plist.d")
            let environment = try Environment(options: directory.options())
            #expect((try? environment.require("Value", as: String.self)) == "main")
            #expect(environment.snapshot.files == [directory.mainFile])
        }
    }

    @Test func dropInPathThatIsAFile() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Value": "main"]])
            let path = try directory.write("Environments.plist.d", text: "oops")
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidDropIn)
            #expect(error?.file == path)
            #expect(error?.description.contains(path) == true)
        }
    }

    @Test func builtInConfigurationIsUsedWithoutAFile() throws {
        try withTemporaryDirectory { directory in
            var options = directory.options()
            options.builtInConfiguration = ["Common": ["Value": "built-in"], "Debug": ["Other": 1]]
            let environment = try Environment(options: options)
            #expect((try? environment.require("Value", as: String.self)) == "built-in")
            #expect(environment.get("Other", default: 0) == 1)
            #expect(environment.snapshot.files.isEmpty)

            try directory.writeXML(["Debug": ["Value": "file"]])
            let fromFile = try Environment(options: options)
            #expect((try? fromFile.require("Value", as: String.self)) == "file")
            #expect(fromFile.fetch("Other") == nil)
        }
    }
}
