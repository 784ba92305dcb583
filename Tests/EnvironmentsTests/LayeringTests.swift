import Environments
import Foundation
import Testing

/// Layers, lowest first: defaults, `Common`, the environment, each drop-in's `Common` and
/// environment, runtime overrides. Dictionaries merge key by key.
@Suite struct LayeringTests {
    /// Six keys: `L1` is set only by the defaults, `L2` also by Common, ... `L6` by all.
    private func writeLayers(_ directory: TemporaryDirectory) throws -> Environment {
        try directory.writeXML([
            "Common": ["L2": "common", "L3": "common", "L4": "common", "L5": "common", "L6": "common"],
            "Debug": ["L3": "debug", "L4": "debug", "L5": "debug", "L6": "debug"],
            "Release": ["L3": "release", "L4": "release", "L5": "release", "L6": "release"],
        ])
        try directory.writeXML(
            [
                "Common": ["L4": "drop-in common", "L5": "drop-in common", "L6": "drop-in common"],
                "Debug": ["L5": "drop-in debug", "L6": "drop-in debug"],
                "Release": ["L5": "drop-in release", "L6": "drop-in release"],
            ],
            to: "Environments.plist.d/10-site.plist")
        let defaults: [String: SettingValue] = [
            "L1": "defaults", "L2": "defaults", "L3": "defaults", "L4": "defaults", "L5": "defaults",
            "L6": "defaults",
        ]
        return try Environment(options: directory.options(defaults: defaults))
    }

    @Test func layersApplyLowestFirst() throws {
        try withTemporaryDirectory { directory in
            let environment = try writeLayers(directory)
            try environment.setOverride("override", forKey: "L6")
            #expect(
                environment.strings(["L1", "L2", "L3", "L4", "L5", "L6"]) == [
                    "defaults", "common", "debug", "drop-in common", "drop-in debug", "override",
                ])
        }
    }

    @Test func aDropInsCommonWinsOverTheMainFilesEnvironment() throws {
        try withTemporaryDirectory { directory in
            let environment = try writeLayers(directory)
            #expect((try? environment.require("L4", as: String.self)) == "drop-in common")
            #expect(environment.configuredValue(forKey: "L4")?.source.layer == .common)
        }
    }

    @Test func laterDropInsWinOverEarlierOnes() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": "main"], "Debug": ["B": "main"]])
            try directory.writeXML(
                ["Common": ["A": "10"], "Debug": ["A": "10 debug", "B": "10"]], to: "Environments.plist.d/10.plist")
            try directory.writeXML(["Common": ["A": "20", "B": "20"]], to: "Environments.plist.d/20.plist")
            let environment = try Environment(options: directory.options())
            #expect((try? environment.require("A", as: String.self)) == "20")
            #expect((try? environment.require("B", as: String.self)) == "20")
        }
    }

    @Test func otherEnvironmentsDoNotLeak() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Shared": 1], "Debug": ["OnlyDebug": 1], "Release": ["OnlyRelease": 1],
            ])
            let environment = try Environment(options: directory.options())
            #expect(environment.fetch("OnlyDebug") as? Int == 1)
            #expect(environment.fetch("OnlyRelease") == nil)
            #expect(environment.fetch("Release") == nil)
            #expect(environment.fetch("Common") == nil)
            #expect(environment.snapshot.leafKeys == ["OnlyDebug", "Shared"])
        }
    }

    @Test func nestedDictionariesMergeKeyByKey() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": [
                    "Database": ["Host": "localhost", "Port": 5432, "Pool": ["Min": 1, "Max": 10]]
                ],
                "Debug": ["Database": ["Host": "db.debug", "Pool": ["Max": 4]]],
            ])
            try directory.writeXML(["Debug": ["Database": ["Name": "app_debug"]]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(
                options: directory.options(defaults: ["Database.Timeout": 30, "Database.Port": 1]))
            #expect((try? environment.require("Database.Host", as: String.self)) == "db.debug")
            #expect(environment.get("Database.Port", default: 0) == 5432)
            #expect(environment.get("Database.Timeout", default: 0) == 30)
            #expect((try? environment.require("Database.Name", as: String.self)) == "app_debug")
            #expect(environment.get("Database.Pool.Min", default: 0) == 1)
            #expect(environment.get("Database.Pool.Max", default: 0) == 4)
            #expect(
                environment.value(forKey: "Database")
                    == .dictionary([
                        "Host": "db.debug", "Port": 5432, "Timeout": 30, "Name": "app_debug",
                        "Pool": ["Min": 1, "Max": 4],
                    ]))
            let database = try #require(environment.fetch("Database") as? [String: Any])
            #expect(database["Host"] as? String == "db.debug")
            #expect(database["Port"] as? Int == 5432)
            #expect(
                environment.snapshot.leafKeys == [
                    "Database.Host", "Database.Name", "Database.Pool.Max", "Database.Pool.Min", "Database.Port",
                    "Database.Timeout",
                ])
        }
    }

    @Test func arraysAndScalarsReplaceWhole() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Hosts": ["a", "b", "c"], "Mode": ["Kind": "dict"], "Level": "info"],
                "Debug": ["Hosts": ["d"], "Mode": "plain", "Level": ["Name": "debug"]],
            ])
            let environment = try Environment(options: directory.options())
            #expect(environment.value(forKey: "Hosts") == .array(["d"]))
            #expect(environment.value(forKey: "Mode") == .string("plain"))
            #expect(environment.fetch("Mode.Kind") == nil)
            #expect(environment.value(forKey: "Level") == .dictionary(["Name": "debug"]))
            #expect((try? environment.require("Level.Name", as: String.self)) == "debug")
        }
    }

    @Test func dottedPathsStopAtScalars() throws {
        let environment = try Environment(values: ["Host": "example.com", "Database": ["Host": "db"]])
        #expect(environment.fetch("Host.Name") == nil)
        #expect(environment.fetch("Database.Host.Name") == nil)
        #expect(environment.fetch("Database.") == nil)
        #expect(environment.fetch("") == nil)
    }

    @Test func overridesAreTheTopLayerAndCanBeRemoved() throws {
        try withTemporaryDirectory { directory in
            let environment = try writeLayers(directory)
            let applied = try environment.setOverride("override", forKey: "L2")
            guard case .applied(let change) = applied else {
                Issue.record("expected .applied, got \(applied)")
                return
            }
            #expect(change.changedKeys == ["L2"])
            #expect((try? environment.require("L2", as: String.self)) == "override")
            #expect(environment.configuredValue(forKey: "L2")?.source == .override)
            #expect(environment.generation == 2)

            let removed = try environment.setOverride(nil, forKey: "L2")
            guard case .applied = removed else {
                Issue.record("expected .applied, got \(removed)")
                return
            }
            #expect((try? environment.require("L2", as: String.self)) == "common")
            #expect(environment.configuredValue(forKey: "L2")?.source.layer == .common)
            #expect(environment.generation == 3)
        }
    }

    @Test func overridesReachNestedKeysAndAddNewOnes() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Database": ["Host": "db", "Port": 5432]]])
            let environment = try Environment(options: directory.options())
            try environment.setOverride("replica", forKey: "Database.Host")
            try environment.setOverride(.integer(9), forKey: "New.Key")
            #expect((try? environment.require("Database.Host", as: String.self)) == "replica")
            #expect(environment.get("Database.Port", default: 0) == 5432)
            #expect(environment.get("New.Key", default: 0) == 9)
            try environment.removeAllOverrides()
            #expect((try? environment.require("Database.Host", as: String.self)) == "db")
            #expect(environment.fetch("New.Key") == nil)
            #expect(environment.fetch("New") == nil)
        }
    }

    @Test func overridesSurviveReloadsButAreNotPersisted() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": "file", "B": "file"]])
            let before = try Data(contentsOf: URL(fileURLWithPath: directory.mainFile))
            let environment = try Environment(options: directory.options())
            try environment.setOverride("override", forKey: "A")
            try directory.writeXML(["Debug": ["A": "edited", "B": "edited"]])
            try environment.reload()
            #expect((try? environment.require("A", as: String.self)) == "override")
            #expect((try? environment.require("B", as: String.self)) == "edited")
            try directory.write("Environments.plist", data: before)
            let fresh = try Environment(options: directory.options())
            #expect((try? fresh.require("A", as: String.self)) == "file")
        }
    }

    @Test func settingTheSameOverrideTwiceIsUnchanged() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["A": "file"]])
            let environment = try Environment(options: directory.options())
            try environment.setOverride("x", forKey: "A")
            let again = try environment.setOverride("x", forKey: "A")
            guard case .unchanged(let snapshot) = again else {
                Issue.record("expected .unchanged, got \(again)")
                return
            }
            #expect(snapshot.generation == 2)
            #expect(environment.generation == 2)
        }
    }

    @Test func inMemoryOverridesCanBeRemoved() throws {
        let environment = try Environment(values: ["A": "base", "Nested.B": 1])
        try environment.setOverride("override", forKey: "A")
        try environment.setOverride(2, forKey: "Nested.B")
        #expect((try? environment.require("A", as: String.self)) == "override")
        #expect(environment.get("Nested.B", default: 0) == 2)
        try environment.setOverride(nil, forKey: "A")
        #expect((try? environment.require("A", as: String.self)) == "base")
        #expect(environment.get("Nested.B", default: 0) == 2)
        try environment.removeAllOverrides()
        #expect(environment.get("Nested.B", default: 0) == 1)
        #expect(environment.configuredValue(forKey: "A")?.source == .defaults)
    }
}
