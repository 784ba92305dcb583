import Environments
import Foundation
import TestSupport
import Testing

/// Instances: a file's `Instances.NAME` dictionary sits right above that file's environment
/// section, file by file; the instance comes from the options or `APP_INSTANCE`.
@Suite struct InstanceTests {
    private func writeFiles(_ directory: TemporaryDirectory) throws {
        try directory.writeXML([
            "Common": ["Region": "none", "Port": 8080, "Database": ["Host": "db", "Pool": 4]],
            "Debug": ["Region": "debug", "Port": 9090],
            "Instances": [
                "eu-west": ["Region": "eu-west", "Database": ["Host": "db.eu"]],
                "us-east": ["Region": "us-east"],
            ],
        ])
        try directory.writeXML(
            ["Debug": ["Port": 7070], "Instances": ["us-east": ["Port": 6060]]],
            to: "Environments.plist.d/10-site.plist")
    }

    @Test func anInstanceIsLayeredAboveItsFilesEnvironmentSection() throws {
        try withTemporaryDirectory { directory in
            try writeFiles(directory)
            var options = directory.options()
            options.instance = "eu-west"
            let environment = try Environment(options: options)
            #expect(environment.snapshot.instanceName == "eu-west")
            #expect((try? environment.require("Region", as: String.self)) == "eu-west")
            // Dictionaries merge key by key.
            #expect((try? environment.require("Database.Host", as: String.self)) == "db.eu")
            #expect(environment.get("Database.Pool", default: 0) == 4)
            // The drop-in's environment section is a later file: it wins over the main file's instance.
            #expect(environment.get("Port", default: 0) == 7070)
            let source = try #require(environment.configuredValue(forKey: "Region")?.source)
            #expect(source.layer == .instance)
            #expect(source.section == "Instances.eu-west")
            #expect(source.description == "\(directory.mainFile) [Instances.eu-west]")
        }
    }

    @Test func theInstanceVariableSelectsAndAnExplicitInstanceWins() throws {
        try withTemporaryDirectory { directory in
            try writeFiles(directory)
            let fromVariable = try Environment(
                options: directory.options(processEnvironment: ["APP_INSTANCE": "us-east"]))
            #expect((try? fromVariable.require("Region", as: String.self)) == "us-east")
            #expect(fromVariable.get("Port", default: 0) == 6060)
            var options = directory.options(processEnvironment: ["APP_INSTANCE": "us-east"])
            options.instance = "eu-west"
            #expect((try Environment(options: options).require("Region", as: String.self)) == "eu-west")
        }
    }

    @Test func noInstanceAndAnUnknownInstanceAddNothing() throws {
        try withTemporaryDirectory { directory in
            try writeFiles(directory)
            let none = try Environment(options: directory.options())
            #expect(none.snapshot.instanceName == nil)
            #expect((try? none.require("Region", as: String.self)) == "debug")
            var options = directory.options()
            options.instance = "ap-south"
            let unknown = try Environment(options: options)
            #expect(unknown.snapshot.instanceName == "ap-south")
            #expect((try? unknown.require("Region", as: String.self)) == "debug")
        }
    }

    @Test func anApplicationCanRequireAKnownInstance() throws {
        try withTemporaryDirectory { directory in
            try writeFiles(directory)
            var options = directory.options()
            options.instance = "ap-south"
            options.requiresKnownInstance = true
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(error?.code == .unknownInstance)
            #expect(error?.description.contains("known instances: eu-west, us-east") == true)
            options.instance = "us-east"
            #expect((try Environment(options: options).require("Region", as: String.self)) == "us-east")
        }
    }

    @Test(arguments: [
        ("<key>Instances</key><string>x</string>", "'Instances' in this file is a string"),
        (
            "<key>Instances</key><dict><key>eu</key><integer>1</integer></dict>",
            "instance 'eu' in Instances is an integer"
        ),
    ])
    func aMalformedInstancesEntryIsAnErrorWithItsLine(entry: String, message: String) throws {
        try withTemporaryDirectory { directory in
            try directory.write(
                "Environments.plist",
                text: plistDocument(
                    """
                    <key>Debug</key><dict/>
                    \(entry)
                    """))
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidSection)
            #expect(error?.description.contains(message) == true, "\(String(describing: error))")
            #expect(error?.line == 5)
        }
    }
}

/// Scoped views.
@Suite struct ScopedConfigurationTests {
    @Test func aViewReadsRelativeKeysAndFollowsReloads() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Debug": ["APIBaseUrl": "https://api", "Database": ["Host": "db1", "Pool": ["Size": 4]]]
            ])
            let environment = try Environment(options: directory.options())
            let database = environment.scoped("Database")
            #expect((try? database.require("Host", as: String.self)) == "db1")
            #expect(database.scoped("Pool").get("Size", default: 0) == 4)
            #expect(environment.scoped("Database.Pool").get("Size", default: 0) == 4)
            #expect(database.configuredValue(forKey: "Host")?.source.file == directory.mainFile)
            #expect(environment.fetch("APIBaseUrl") as? String == "https://api")
            #expect(database.fetch("Host") as? String == "db1")
            #expect(database.fetch("Missing") == nil)

            try directory.writeXML(["Debug": ["Database": ["Host": "db2", "Pool": ["Size": 8]]]])
            _ = try environment.reload()
            #expect((try? database.require("Host", as: String.self)) == "db2")
            #expect(database.fetch("Pool") as? [String: Any] != nil)
            // A view of a snapshot stays on it.
            let pinned = environment.snapshot.scoped("Database")
            try directory.writeXML(["Debug": ["Database": ["Host": "db3"]]])
            _ = try environment.reload()
            #expect((try? pinned.require("Host", as: String.self)) == "db2")
            #expect((try? database.require("Host", as: String.self)) == "db3")
        }
    }

    private struct Pool: Decodable, Equatable {
        var Size: Int
    }

    private struct Database: Decodable, Equatable {
        var Host: String
        var Pool: Pool
    }

    /// A component that only knows readers.
    private func poolSize(_ reader: some ConfigurationReading) -> Int { reader.get("Size", default: -1) }

    @Test func aViewDecodesAndReportsFullKeyPaths() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Database": ["Host": "db", "Pool": ["Size": "many"]]]])
            let database = try Environment(options: directory.options()).scoped("Database")
            #expect(poolSize(database.scoped("Pool")) == -1)
            let typed = #expect(throws: EnvironmentError.self) { try database.require("Pool.Size", as: Int.self) }
            #expect(typed?.key == "Database.Pool.Size")
            #expect(typed?.file == directory.mainFile)
            let missing = #expect(throws: EnvironmentError.self) { try database.require("Port", as: Int.self) }
            #expect(missing?.key == "Database.Port")
            let decoded = #expect(throws: EnvironmentError.self) { try database.decode(Database.self) }
            #expect(decoded?.key == "Database.Pool.Size")

            try directory.writeXML(["Debug": ["Database": ["Host": "db", "Pool": ["Size": 3]]]])
            let fixed = try Environment(options: directory.options()).scoped("Database")
            #expect(try fixed.decode(Database.self) == Database(Host: "db", Pool: Pool(Size: 3)))
            #expect(try fixed.decode(Pool.self, from: "Pool") == Pool(Size: 3))
        }
    }
}
