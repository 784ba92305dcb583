import Environments
import Foundation
import Testing

/// Bad input of every kind: each error has its code and names the file, line, key and
/// environment where they are known.
@Suite struct ErrorTests {
    private let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        """

    @Test func missingFileListsTheSearchedPaths() throws {
        try withTemporaryDirectory { directory in
            let first = try directory.makeDirectory("first")
            let second = try directory.makeDirectory("second")
            let options = EnvironmentOptions(
                applicationName: "environments-tests-missing", build: BuildInfo(defaultEnvironment: "Debug"),
                processEnvironment: ["CONFIGURATION_DIRECTORY": "\(first):\(second)"])
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            let thrown = try #require(error)
            #expect(thrown.code == .fileNotFound)
            let searched = [
                first + "/Environments.plist", second + "/Environments.plist",
                "/etc/environments-tests-missing/Environments.plist",
            ]
            #expect(thrown.searchedFiles == searched)
            #expect(thrown.file == nil)
            for path in searched { #expect(thrown.description.contains(path)) }
            #expect(thrown.description.contains("no Environments.plist found"))
        }
    }

    @Test func missingFileInTheExplicitDirectory() throws {
        try withTemporaryDirectory { directory in
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .fileNotFound)
            #expect(error?.searchedFiles == [directory.mainFile])
            #expect(error?.description.contains(directory.mainFile) == true)
            #expect(error?.hint?.contains("--config-dir") == true)
        }
    }

    @Test func unreadableFile() throws {
        try withTemporaryDirectory { directory in
            // A directory stands in for a file without read permission (root can read anything).
            try directory.makeDirectory("Environments.plist")
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .fileUnreadable)
            #expect(error?.file == directory.mainFile)
            #expect(error?.description.hasPrefix(directory.mainFile + ": ") == true)
        }
    }

    /// Loads a main file that sets `Debug.A` beside what `writeDropIn` writes (returning the
    /// drop-in's path): the load fails with `code`, naming the drop-in's file.
    private func dropInError(
        _ code: EnvironmentError.Code, _ writeDropIn: (TemporaryDirectory) throws -> String
    ) throws -> EnvironmentError {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": 1]])
            let dropIn = try writeDropIn(directory)
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error.code == code)
            #expect(error.file == dropIn)
            return error
        }
    }

    @Test func unreadableDropIn() throws {
        let error = try dropInError(.fileUnreadable) { try $0.makeDirectory("Environments.plist.d/10-dir.plist") }
        #expect(error.description.contains("drop-in"))
    }

    @Test func aFIFODropInIsNotARegularFileAndDoesNotBlock() throws {
        let error = try dropInError(.fileUnreadable) { directory in
            try directory.makeDirectory("Environments.plist.d")
            let fifo = directory.path("Environments.plist.d/10-fifo.plist")
            try #require(mkfifo(fifo, 0o644) == 0)
            return fifo
        }
        #expect(error.message == "drop-in is not a regular file: it is a FIFO (named pipe)")
        #expect(!error.description.contains("permission"))
    }

    @Test func aLinkToADeviceIsRefusedBeforeReading() throws {
        let error = try dropInError(.fileUnreadable) { directory in
            try directory.makeDirectory("Environments.plist.d")
            let link = directory.path("Environments.plist.d/20-zero.plist")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/zero")
            return link
        }
        #expect(error.message == "drop-in is not a regular file: it is a character device")
    }

    @Test func anOversizedFileIsRefused() throws {
        try withTemporaryDirectory { directory in
            let file = directory.mainFile
            try #require(FileManager.default.createFile(atPath: file, contents: nil))
            try #require(truncate(file, off_t(17 << 20)) == 0)
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .fileUnreadable)
            #expect(error?.message.hasPrefix("is larger than 16 MiB") == true)
        }
    }

    /// A main file with one bad element, and where the error must point.
    struct BadElement: CustomTestStringConvertible, Sendable {
        let testDescription: String
        /// The file, rendered by `Plist.xml`: the root `<dict>` is on line 4.
        let text: String
        let code: EnvironmentError.Code
        let line: Int
        let key: String?
        /// What the description says besides `file:line: `.
        let mentions: [String]
    }

    static let badElements = [
        BadElement(
            testDescription: "a misspelt closing tag",
            text: Plist.xml(["Common": ["Port": 80, "Service": Plist.Raw("<string>app</strin>")]]),
            code: .malformedFile, line: 10, key: nil, mentions: ["envctl check"]),
        BadElement(
            testDescription: "an integer that is no number",
            text: Plist.xml(["Debug": ["Port": Plist.Raw("<integer>eighty</integer>")]]),
            code: .malformedFile, line: 8, key: nil, mentions: []),
        BadElement(
            testDescription: "an environment section that is a string",
            text: Plist.xml(["Common": [String: Any](), "Debug": "production"]),
            code: .invalidSection, line: 8, key: "Debug", mentions: ["'Debug'", "string"]),
    ]

    @Test(arguments: badElements)
    func aBadElementNamesItsFileAndLine(_ bad: BadElement) throws {
        let (error, file) = try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: bad.text)
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            return (error, directory.mainFile)
        }
        #expect(error.code == bad.code)
        #expect(error.file == file)
        #expect(error.line == bad.line)
        #expect(error.location == "\(file):\(bad.line)")
        #expect(error.description.hasPrefix("\(file):\(bad.line): "))
        if let key = bad.key { #expect(error.key == key) }
        for words in bad.mentions { #expect(error.description.contains(words)) }
    }

    @Test(arguments: [
        ("empty", ""),
        ("truncated", "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n<dict>\n<key>Debug</key>\n"),
        ("text", "Debug = production\n"),
        ("binary garbage", "bplist00\u{01}\u{02}"),
    ])
    func malformedFiles(name: String, text: String) throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: text)
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .malformedFile, "\(name)")
            #expect(error?.file == directory.mainFile, "\(name)")
            #expect(error?.description.contains(directory.mainFile) == true, "\(name)")
        }
    }

    @Test func emptyFileSaysSo() throws {
        try withTemporaryDirectory { directory in
            try directory.write("Environments.plist", text: "")
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.description.contains("empty") == true)
        }
    }

    @Test func arrayRootIsInvalid() throws {
        try withTemporaryDirectory { directory in
            try directory.write(
                "Environments.plist", text: header + "\n<array>\n<string>Debug</string>\n</array>\n</plist>\n")
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidRoot)
            #expect(error?.file == directory.mainFile)
            #expect(error?.description.contains("array") == true)
            #expect(error?.description.contains(directory.mainFile) == true)
        }
    }

    @Test func binaryArrayRootIsInvalid() throws {
        try withTemporaryDirectory { directory in
            let data = try PropertyListSerialization.data(fromPropertyList: ["a", "b"], format: .binary, options: 0)
            try directory.write("Environments.plist", data: data)
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidRoot)
        }
    }

    @Test func anyBadSectionIsAnErrorEvenIfNotSelected() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": 1], "Production": ["not", "a", "dict"]])
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidSection)
            #expect(error?.key == "Production")
        }
    }

    @Test(
        arguments: [
            ("Common", ["a"]),
            ("Secrets", "Password"),
            ("RestartRequired", ["Port": 1]),
            ("Secrets", [1, 2]),
        ] as [(String, any Sendable)])
    func reservedSectionsWithTheWrongType(key: String, value: any Sendable) throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": 1], key: value])
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidSection)
            #expect(error?.key == key)
            #expect(error?.file == directory.mainFile)
            #expect(error?.line != nil)
        }
    }

    @Test func malformedDropInNamesTheDropIn() throws {
        let error = try dropInError(.malformedFile) { directory in
            try directory.writeXML(["Debug": ["A": 2]], to: "Environments.plist.d/10-good.plist")
            return try directory.write(
                "Environments.plist.d/20-bad.plist",
                text: header
                    + "\n<dict>\n<key>Debug</key>\n<dict>\n<key>A</key>\n<integer>x</integer>\n</dict>\n</dict>\n</plist>\n"
            )
        }
        #expect(error.line == 8)
        #expect(error.description.hasPrefix("\(error.file ?? ""):8: drop-in "))
    }

    @Test func dropInWithABadEnvironmentSection() throws {
        let error = try dropInError(.invalidDropIn) {
            try $0.writeXML(["Debug": "oops"], to: "Environments.plist.d/10.plist")
        }
        #expect(error.key == "Debug")
        #expect(error.line == 5)
        #expect(error.description.contains(error.file ?? "no file"))
    }

    @Test func dropInWithABadCommonSection() throws {
        let error = try dropInError(.invalidDropIn) {
            try $0.writeXML(["Common": 3], to: "Environments.plist.d/10.plist")
        }
        #expect(error.description.contains("drop-in"))
    }

    @Test func dropInWithArrayRoot() throws {
        _ = try dropInError(.invalidRoot) {
            try $0.write("Environments.plist.d/10.plist", text: header + "\n<array/>\n</plist>\n")
        }
    }

    @Test func interpolationErrorsNameKeyEnvironmentAndFile() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": "${B}"], "Debug": ["B": "${A}"]])
            let cycle = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(cycle?.code == .interpolationCycle)
            #expect(cycle?.environment == "Debug")
            #expect(cycle?.description.contains(directory.mainFile) == true)

            try directory.writeXML(["Debug": ["Token": "${credential:token}"]])
            let credential = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["CREDENTIALS_DIRECTORY": directory.path]))
            }
            #expect(credential?.code == .missingCredential)
            #expect(credential?.description.contains(directory.path("token")) == true)
            #expect(credential?.description.contains("'Token'") == true)

            try directory.writeXML(["Debug": ["Home": "${env:DATA_HOME}"]])
            let variable = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(variable?.code == .missingEnvironmentVariable)
            #expect(variable?.description.contains("DATA_HOME") == true)
            #expect(variable?.description.contains("environment 'Debug'") == true)
        }
    }

    @Test func descriptionFormat() {
        let error = EnvironmentError(
            .missingKey, "required key 'A' has no value", key: "A", environment: "Production",
            file: "/etc/app/Environments.plist", line: 12,
            searchedFiles: ["/etc/app/Environments.plist", "/etc/app/x.plist"],
            hint: "Add it")
        #expect(
            error.description
                == "/etc/app/Environments.plist:12: required key 'A' has no value (environment 'Production'; searched: /etc/app/Environments.plist, /etc/app/x.plist). Add it"
        )
        let bare = EnvironmentError(.typeMismatch, "bad", key: "K")
        #expect(bare.location == "")
        #expect(bare.description == "bad (key 'K')")
        #expect(EnvironmentError.Code.malformedFile.description == "malformedFile")
        #expect(EnvironmentError.Code.malformedFile != .invalidRoot)
    }
}
