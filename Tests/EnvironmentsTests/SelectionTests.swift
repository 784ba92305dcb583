import Environments
import Foundation
import Testing

/// Which environment is selected: the build, `--environment`, `$APP_ENVIRONMENT`, and the
/// build's `AllowedEnvironments`.
@Suite struct SelectionTests {
    /// A file with three environments, each naming itself in `Name`.
    private func writeThreeEnvironments(_ directory: TemporaryDirectory) throws {
        try directory.writeXML([
            "Common": ["Name": "common", "Shared": "yes"],
            "Debug": ["Name": "debug"],
            "Release": ["Name": "release"],
            "Staging": ["Name": "staging"],
        ])
    }

    @Test func compiledConfigurationFollowsTheBuild() {
        #if DEBUG
            #expect(BuildInfo.compiledConfiguration == "Debug")
            #expect(BuildInfo().defaultEnvironment == "Debug")
        #else
            #expect(BuildInfo.compiledConfiguration == "Release")
            #expect(BuildInfo().defaultEnvironment == "Release")
        #endif
        #expect(BuildInfo().allowedEnvironments == nil)
        #expect(EnvironmentOptions(processEnvironment: [:]).build == BuildInfo())
    }

    @Test func theCompiledConfigurationIsTheDefaultEnvironment() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            var options = directory.options()
            options.build = BuildInfo()
            let environment = try Environment(options: options)
            #expect(environment.environmentName == BuildInfo.compiledConfiguration)
            #expect(environment.snapshot.environmentName == BuildInfo.compiledConfiguration)
            #expect((try? environment.require("Name", as: String.self)) == BuildInfo.compiledConfiguration.lowercased())
            #expect((try? environment.require("Shared", as: String.self)) == "yes")
        }
    }

    /// One way an environment is asked for, and the one it selects.
    struct Selection: Sendable, CustomTestStringConvertible {
        /// The build's default (`BuildInfo.defaultEnvironment`).
        var build = "Debug"
        /// `EnvironmentOptions.environment` (what `--environment` gives).
        var explicit: String?
        /// `$APP_ENVIRONMENT`.
        var variable: String?
        var selected: String

        var testDescription: String {
            "build \(build), explicit \(explicit ?? "none"), $APP_ENVIRONMENT \(variable ?? "unset") -> \(selected)"
        }
    }

    /// The build's default, unless the variable names another; an explicit name wins over
    /// both; an empty name or variable counts as none.
    @Test(arguments: [
        Selection(build: "Staging", selected: "Staging"),
        Selection(explicit: "Release", selected: "Release"),
        Selection(variable: "Staging", selected: "Staging"),
        Selection(explicit: "Release", variable: "Staging", selected: "Release"),
        Selection(explicit: "", variable: "", selected: "Debug"),
    ])
    func selection(_ selection: Selection) throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            let environment = try Environment(
                options: directory.options(
                    environment: selection.explicit,
                    processEnvironment: selection.variable.map { ["APP_ENVIRONMENT": $0] } ?? [:],
                    build: BuildInfo(defaultEnvironment: selection.build)))
            #expect(environment.environmentName == selection.selected)
            #expect((try? environment.require("Name", as: String.self)) == selection.selected.lowercased())
        }
    }

    @Test func customEnvironmentVariableName() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            var options = directory.options(
                processEnvironment: ["APP_ENVIRONMENT": "Release", "MY_ENV": "Staging"])
            options.environmentVariable = "MY_ENV"
            let environment = try Environment(options: options)
            #expect(environment.environmentName == "Staging")
        }
    }

    @Test func unknownEnvironmentListsTheKnownOnes() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["APP_ENVIRONMENT": "Prodution"]))
            }
            let thrown = try #require(error)
            #expect(thrown.code == .unknownEnvironment)
            #expect(thrown.environment == "Prodution")
            #expect(thrown.searchedFiles == [directory.mainFile])
            let text = thrown.description
            #expect(text.contains("'Prodution'"))
            #expect(text.contains("known environments: Debug, Release, Staging"))
            #expect(!text.contains("Common"))
            #expect(text.contains("$APP_ENVIRONMENT"))
            #expect(text.contains(directory.mainFile))
        }
    }

    @Test func unknownExplicitEnvironmentSaysHowItWasSelected() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options(environment: "Nope"))
            }
            #expect(error?.code == .unknownEnvironment)
            // Set in code: the message does not claim a flag the program may not have.
            #expect(error?.description.contains("(set by the application)") == true, "\(String(describing: error))")
            #expect(error?.description.contains("--environment") == false)
            #expect(error?.description.contains("Debug, Release, Staging") == true)

            // As the application says it chose it.
            var options = directory.options(environment: "Nope")
            options.environmentOrigin = "selected with --environment"
            var described = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(described?.description.contains("(selected with --environment)") == true)
            options.environmentOrigin = "given as the first argument"
            described = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(described?.description.contains("(given as the first argument)") == true)
        }
    }

    @Test func environmentDefinedOnlyInADropInIsKnown() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            try directory.writeXML(["Canary": ["Name": "canary"]], to: "Environments.plist.d/50-canary.plist")
            let environment = try Environment(options: directory.options(environment: "Canary"))
            #expect((try? environment.require("Name", as: String.self)) == "canary")
            #expect((try? environment.require("Shared", as: String.self)) == "yes")
        }
    }

    @Test func disallowedEnvironmentListsTheAllowedOnes() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            let build = BuildInfo(defaultEnvironment: "Release", allowedEnvironments: ["Release", "Staging"])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options(environment: "Debug", build: build))
            }
            let thrown = try #require(error)
            #expect(thrown.code == .disallowedEnvironment)
            #expect(thrown.environment == "Debug")
            #expect(thrown.description.contains("'Debug'"))
            #expect(thrown.description.contains("allowed: Release, Staging"))

            let allowed = try Environment(options: directory.options(environment: "Staging", build: build))
            #expect(allowed.environmentName == "Staging")
            let byDefault = try Environment(options: directory.options(build: build))
            #expect(byDefault.environmentName == "Release")
        }
    }

    @Test func disallowedEnvironmentFromTheVariable() throws {
        try withTemporaryDirectory { directory in
            try writeThreeEnvironments(directory)
            let build = BuildInfo(defaultEnvironment: "Release", allowedEnvironments: ["Release"])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["APP_ENVIRONMENT": "Debug"], build: build))
            }
            #expect(error?.code == .disallowedEnvironment)
            #expect(error?.description.contains("allowed: Release") == true)
        }
    }
}

/// `BuildInfo(infoPlist:)`: the embedded Info.plist's `Configuration` and
/// `AllowedEnvironments`.
@Suite struct BuildInfoTests {
    private func bytes(_ root: [String: Any]) -> [UInt8] { Array(Plist.xml(root).utf8) }

    @Test func readsConfigurationAndAllowedEnvironmentsFromXML() throws {
        let info = try BuildInfo(
            infoPlist: bytes([
                "CFBundleIdentifier": "com.example.daemon",
                "Configuration": "Staging",
                "AllowedEnvironments": ["Staging", "Production"],
            ]))
        #expect(info.defaultEnvironment == "Staging")
        #expect(info.allowedEnvironments == ["Staging", "Production"])
    }

    @Test func readsABinaryInfoPlist() throws {
        let data = try Plist.binary(["Configuration": "Production", "AllowedEnvironments": ["Production"]])
        let info = try BuildInfo(infoPlist: Array(data))
        #expect(info.defaultEnvironment == "Production")
        #expect(info.allowedEnvironments == ["Production"])
    }

    @Test func withoutKeysItIsTheBuildConfiguration() throws {
        let info = try BuildInfo(infoPlist: bytes(["CFBundleName": "daemon"]), buildConfiguration: "Release")
        #expect(info == BuildInfo(defaultEnvironment: "Release", allowedEnvironments: nil))
        let compiled = try BuildInfo(infoPlist: bytes([:]))
        #expect(compiled.defaultEnvironment == BuildInfo.compiledConfiguration)
    }

    @Test(arguments: ["$(CONFIGURATION)", "", "   "])
    func unexpandedOrEmptyConfigurationKeepsTheBuildConfiguration(value: String) throws {
        let info = try BuildInfo(infoPlist: bytes(["Configuration": value]), buildConfiguration: "Release")
        #expect(info.defaultEnvironment == "Release")
    }

    @Test("CFBundleShortVersionString is the application's version; unexpanded or empty, none; not a string, an error")
    func version() throws {
        #expect(try BuildInfo(infoPlist: bytes(["CFBundleShortVersionString": " 1.4.0 "])).version == "1.4.0")
        #expect(try BuildInfo(infoPlist: bytes(["CFBundleShortVersionString": "$(MARKETING_VERSION)"])).version == nil)
        #expect(try BuildInfo(infoPlist: bytes(["CFBundleName": "daemon"])).version == nil)
        let wrong = #expect(throws: EnvironmentError.self) {
            try BuildInfo(infoPlist: self.bytes(["CFBundleShortVersionString": 14]))
        }
        #expect(wrong?.key == "CFBundleShortVersionString" && wrong?.code == .invalidSection)
    }

    @Test func configurationIsTrimmed() throws {
        let info = try BuildInfo(infoPlist: bytes(["Configuration": " Staging "]))
        #expect(info.defaultEnvironment == "Staging")
    }

    @Test func allowedEnvironmentsByBuildConfiguration() throws {
        let plist = bytes([
            "Configuration": "Production",
            "AllowedEnvironments": ["Release": ["Production", "Staging"], "Debug": ["Debug", "Staging"]],
        ])
        let release = try BuildInfo(infoPlist: plist, buildConfiguration: "Release")
        #expect(release.allowedEnvironments == ["Production", "Staging"])
        let debug = try BuildInfo(infoPlist: plist, buildConfiguration: "Debug")
        #expect(debug.allowedEnvironments == ["Debug", "Staging"])
        #expect(debug.defaultEnvironment == "Production")
        let other = try BuildInfo(infoPlist: plist, buildConfiguration: "Profile")
        #expect(other.allowedEnvironments == nil)
    }

    @Test func wrongTypesAreInvalidSections() throws {
        let badConfiguration = #expect(throws: EnvironmentError.self) {
            try BuildInfo(infoPlist: self.bytes(["Configuration": 3]))
        }
        #expect(badConfiguration?.code == .invalidSection)
        #expect(badConfiguration?.key == "Configuration")
        #expect(badConfiguration?.description.contains("integer") == true)

        let badAllowed = #expect(throws: EnvironmentError.self) {
            try BuildInfo(infoPlist: self.bytes(["AllowedEnvironments": "Production"]))
        }
        #expect(badAllowed?.code == .invalidSection)
        #expect(badAllowed?.key == "AllowedEnvironments")

        let badElement = #expect(throws: EnvironmentError.self) {
            try BuildInfo(infoPlist: self.bytes(["AllowedEnvironments": ["Production", 7]]))
        }
        #expect(badElement?.code == .invalidSection)
        #expect(badElement?.description.contains("integer") == true)

        let badEntry = #expect(throws: EnvironmentError.self) {
            try BuildInfo(
                infoPlist: self.bytes(["AllowedEnvironments": ["Release": "Production"]]),
                buildConfiguration: "Release")
        }
        #expect(badEntry?.code == .invalidSection)
        #expect(badEntry?.description.contains("AllowedEnvironments.Release") == true)
    }

    @Test func malformedInfoPlist() {
        let error = #expect(throws: EnvironmentError.self) {
            try BuildInfo(infoPlist: Array("<plist><dict><key>Configuration</key>".utf8))
        }
        #expect(error?.code == .malformedFile)
        #expect(error?.file == "embedded Info.plist")
    }

    @Test func infoPlistRestrictsSelection() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Debug": ["Name": "debug"], "Staging": ["Name": "staging"],
                "Production": ["Name": "production"],
            ])
            let info = try BuildInfo(
                infoPlist: bytes(["Configuration": "Production", "AllowedEnvironments": ["Production", "Staging"]]))
            let environment = try Environment(options: directory.options(build: info))
            #expect(environment.environmentName == "Production")
            #expect((try? environment.require("Name", as: String.self)) == "production")
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options(environment: "Debug", build: info))
            }
            #expect(error?.code == .disallowedEnvironment)
            #expect(error?.description.contains("Production, Staging") == true)
        }
    }
}
