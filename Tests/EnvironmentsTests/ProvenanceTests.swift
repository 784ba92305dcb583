import Environments
import Foundation
import Testing

/// Where every effective value came from: layer, file and section.
@Suite struct ProvenanceTests {
    @Test func everyLayerIsRecorded() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["FromCommon": "c", "Nested": ["FromCommon": "c"]],
                "Production": ["FromEnvironment": "e", "Nested": ["FromEnvironment": "e"]],
            ])
            let dropIn = try directory.writeXML(
                ["Common": ["FromDropInCommon": "dc"], "Production": ["FromDropInEnvironment": "de"]],
                to: "Environments.plist.d/10-site.plist")
            let environment = try Environment(
                options: directory.options(environment: "Production", defaults: ["FromDefaults": "d"]))
            try environment.setOverride("o", forKey: "FromOverride")

            func source(_ key: String) -> ValueSource? { environment.configuredValue(forKey: key)?.source }
            #expect(source("FromDefaults") == ValueSource(layer: .defaults))
            #expect(source("FromDefaults") == .defaults)
            #expect(
                source("FromCommon") == ValueSource(layer: .common, file: directory.mainFile, section: "Common"))
            #expect(
                source("Nested.FromCommon")
                    == ValueSource(layer: .common, file: directory.mainFile, section: "Common"))
            #expect(
                source("FromEnvironment")
                    == ValueSource(layer: .environment, file: directory.mainFile, section: "Production"))
            #expect(
                source("Nested.FromEnvironment")
                    == ValueSource(layer: .environment, file: directory.mainFile, section: "Production"))
            #expect(source("FromDropInCommon") == ValueSource(layer: .common, file: dropIn, section: "Common"))
            #expect(
                source("FromDropInEnvironment")
                    == ValueSource(layer: .environment, file: dropIn, section: "Production"))
            #expect(source("FromOverride") == ValueSource(layer: .override))
            #expect(source("FromOverride") == .override)
            // A dictionary is attributed to the last layer that wrote into it.
            #expect(source("Nested")?.layer == .environment)
        }
    }

    @Test func aValueOverriddenInALaterLayerTakesThatSource() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Port": 1], "Debug": ["Port": 2]])
            let dropIn = try directory.writeXML(["Common": ["Port": 3]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(options: directory.options(defaults: ["Port": 0]))
            let configured = try #require(environment.configuredValue(forKey: "Port"))
            #expect(configured.value == .integer(3))
            #expect(configured.source == ValueSource(layer: .common, file: dropIn, section: "Common"))
            #expect(configured.isSecret == false)
        }
    }

    @Test func inMemoryEnvironmentsHaveNoFile() throws {
        let environment = try Environment(
            environments: ["Common": ["A": 1], "Staging": ["B": 2]],
            options: EnvironmentOptions(environment: "Staging", processEnvironment: [:]))
        #expect(
            environment.configuredValue(forKey: "A")?.source
                == ValueSource(layer: .common, file: nil, section: "Common"))
        #expect(
            environment.configuredValue(forKey: "B")?.source
                == ValueSource(layer: .environment, file: nil, section: "Staging"))
        #expect(environment.configuredValue(forKey: "B")?.source.description == "built-in [Staging]")
    }

    @Test func sourceDescriptions() {
        #expect(ValueSource.defaults.description == "defaults")
        #expect(ValueSource.override.description == "override")
        #expect(
            ValueSource(layer: .environment, file: "/etc/app/Environments.plist", section: "Production")
                .description == "/etc/app/Environments.plist [Production]")
        #expect(ValueSource(layer: .common, file: "/etc/app/x.plist").description == "/etc/app/x.plist [Common]")
        #expect(
            ValueSource(layer: .instance, file: "/etc/app/x.plist", section: "Instances.eu").description
                == "/etc/app/x.plist [Instances.eu]")
        #expect(
            ValueSource(layer: .environmentVariable, section: "APP_Database__Port").description
                == "$APP_Database__Port")
        // Lowest first.
        #expect(
            ValueSource.Layer.allCases == [
                .defaults, .common, .environment, .instance, .environmentVariable, .override,
            ])
    }

    @Test func snapshotListsFilesInOrder() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": [:] as [String: Any]])
            let second = try directory.writeXML(["Common": ["A": 1]], to: "Environments.plist.d/20.plist")
            let first = try directory.writeXML(["Common": ["A": 0]], to: "Environments.plist.d/10.plist")
            let snapshot = try Environment(options: directory.options()).snapshot
            #expect(snapshot.files == [directory.mainFile, first, second])
            #expect(
                snapshot.description
                    == "environment Debug, generation 1, 1 keys from \(directory.mainFile), \(first), \(second)")
        }
    }
}
