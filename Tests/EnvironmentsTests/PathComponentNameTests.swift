import Foundation
import Testing

@testable import Environments

/// One rule for every name that becomes a path component (systemd's for a unit name's parts),
/// and relative configuration directories made absolute once, when an environment is made.
@Suite struct PathComponentNameTests {
    static let invalid: [String] = [
        "", ".", "..", "../x", "a/b", "/", "x/", "a\u{0}b", "a\nb", "\u{1B}[2J", "a\u{7F}", "sp ace", "é", "a*b",
        "a$b", "a%i", String(repeating: "a", count: 256),
    ]

    @Test(arguments: [PathComponentName.Kind.applicationName, .instance, .dropIn])
    func invalidNamesAreRefusedWithWhereTheyCameFromAndTheRule(kind: PathComponentName.Kind) {
        for name in Self.invalid {
            #expect(!PathComponentName.isValid(name, kind: kind), "\(name.debugDescription)")
            #expect(throws: EnvironmentError.self) { try PathComponentName(name, kind: kind, from: "--origin") }
            do throws(EnvironmentError) {
                _ = try PathComponentName(name, kind: kind, from: "--origin")
            } catch {
                #expect(error.code == .invalidName)
                #expect(error.description.contains("(from --origin)"))
                #expect(error.description.contains("systemd's rule"))
                // One line, and never the whole of a long name.
                #expect(!error.description.contains("\n"))
                #expect(error.description.count < 600)
            }
        }
    }

    @Test func validNamesAreWhatSystemdAllows() {
        for name in ["example-daemon", "a", "A.b_c:d-e\\f", "0", "x..y", "x.", String(repeating: "a", count: 228)] {
            for kind in [PathComponentName.Kind.applicationName, .instance, .dropIn] {
                #expect(PathComponentName.isValid(name, kind: kind), "\(name) \(kind)")
            }
        }
        // `@` in an instance (systemd allows more in the instance), not in a unit's prefix.
        #expect(PathComponentName.isValid("a@b", kind: .instance))
        #expect(PathComponentName.isValid("a@b", kind: .dropIn))
        #expect(!PathComponentName.isValid("a@b", kind: .applicationName))
        // 255 bytes at most; a drop-in 228, so that envctl's temporary file beside it fits too.
        #expect(PathComponentName.isValid(String(repeating: "a", count: 255), kind: .instance))
        #expect(!PathComponentName.isValid(String(repeating: "a", count: 229), kind: .dropIn))
        // A hidden drop-in is never read.
        #expect(!PathComponentName.isValid(".x", kind: .dropIn))
        #expect(PathComponentName.isValid(".x", kind: .instance))
        #expect(PathComponentName.isValid("...", kind: .instance))
    }

    @Test func anInvalidInstanceFailsTheLoadNamingItsOrigin() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": 1], "Debug": [:] as [String: Any]])
            var options = directory.options()
            options.instance = "../../tmp/x"
            #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            do throws(EnvironmentError) {
                _ = try Environment(options: options)
            } catch {
                #expect(error.code == .invalidName)
                #expect(error.message.contains("(from the instance option (--instance))"))
            }
            for name in ["a/b", "..", "a\u{0}b"] {
                do throws(EnvironmentError) {
                    _ = try Environment(options: directory.options(processEnvironment: ["APP_INSTANCE": name]))
                    Issue.record("\(name.debugDescription) was accepted")
                } catch {
                    #expect(error.code == .invalidName)
                    #expect(error.message.contains("(from $APP_INSTANCE)"))
                }
            }
            // An empty variable selects no instance; an explicitly empty instance is refused.
            #expect(
                try Environment(options: directory.options(processEnvironment: ["APP_INSTANCE": ""])).snapshot
                    .instanceName == nil)
            options.instance = ""
            #expect(throws: EnvironmentError.self) { try Environment(options: options) }
        }
    }

    @Test func anApplicationNameThatWouldLeaveEtcFailsTheLoad() throws {
        for name in ["../../tmp", "a/b", ".."] {
            let options = EnvironmentOptions(applicationName: name, processEnvironment: [:])
            do throws(EnvironmentError) {
                _ = try Environment(options: options)
                Issue.record("\(name) was accepted")
            } catch {
                #expect(error.code == .invalidName, "\(error)")
                #expect(error.message.contains("application name"))
            }
        }
    }

    @Test func relativePathsAreMadeAbsoluteAgainstTheWorkingDirectory() {
        #expect(EnvironmentOptions.absolute("cfg", against: "/srv/app") == "/srv/app/cfg")
        #expect(EnvironmentOptions.absolute("./cfg/", against: "/srv/app/") == "/srv/app/cfg")
        #expect(EnvironmentOptions.absolute("../cfg", against: "/srv/app") == "/srv/app/../cfg")
        #expect(EnvironmentOptions.absolute("/etc/app", against: "/srv/app") == "/etc/app")
        #expect(EnvironmentOptions.absolute("cfg", against: "/") == "/cfg")

        var options = EnvironmentOptions(
            configDirectory: "cfg", processEnvironment: ["CONFIGURATION_DIRECTORY": "a:/etc/b:./c"])
        options.candidateDocuments = ["cfg/Environments.plist": Data()]
        let anchored = options.anchoringPaths(at: "/srv/app")
        #expect(anchored.configDirectory == "/srv/app/cfg")
        #expect(anchored.processEnvironment["CONFIGURATION_DIRECTORY"] == "/srv/app/a:/etc/b:/srv/app/c")
        #expect(anchored.candidateDocuments.keys.sorted() == ["/srv/app/cfg/Environments.plist"])
    }

    @Test func anEnvironmentReportsAndReadsItsRelativeDirectoryAsAnAbsoluteOne() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": 1], "Debug": [:] as [String: Any]])
            let workingDirectory = try #require(EnvironmentOptions.workingDirectory)
            let depth = workingDirectory.split(separator: "/").count
            let relative = String(repeating: "../", count: depth) + directory.path.dropFirst()
            var options = directory.options()
            options.configDirectory = relative
            let environment = try Environment(options: options)
            let configured = try #require(environment.options?.configDirectory)
            #expect(configured.hasPrefix("/"))
            #expect(configured == EnvironmentOptions.absolute(relative, against: workingDirectory))
            let location = try #require(environment.snapshot.location)
            #expect(location.directory == configured)
            #expect(environment.snapshot.files.allSatisfy { $0.hasPrefix("/") })
            #expect(try environment.reload().snapshot.get("A", default: 0) == 1)
        }
    }
}
