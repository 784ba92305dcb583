import Environments
import Foundation
import Testing

/// Documents of a ``ConfigurationSource`` (a fleet configuration) sit below the host's files.
@Suite struct BaseLayerTests {
    /// A layer holding fixed documents, as a fleet layer holds the last ones it read.
    private struct FixedLayer: ConfigurationSource {
        var name: String { "fleet" }
        var held: [ConfigurationDocument]
        func documents() throws(EnvironmentError) -> [ConfigurationDocument] { held }
    }

    /// Made on each use: a global `Data` that lives to the end of the process is reported by
    /// LeakSanitizer (its storage pointer is not visible where the global keeps it).
    private static var fleet: ConfigurationDocument {
        ConfigurationDocument(
            origin: "etcd:/fleet/app/Environments.plist@7",
            data: Data(
                Plist.xml([
                    "Common": ["Port": 80, "Region": "fleet", "Name": "from ${Region}"],
                    "Debug": ["Level": "fleet-debug"],
                ]).utf8))
    }

    private func options(_ directory: TemporaryDirectory, _ documents: [ConfigurationDocument]) -> EnvironmentOptions {
        var options = directory.options()
        options.sources = [FixedLayer(held: documents)]
        return options
    }

    @Test func theHostsFilesOverrideTheLayerSettingBySetting() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Port": 8080], "Debug": [:]])
            try directory.writeXML(["Common": ["Region": "host"]], to: "Environments.plist.d/10-local.plist")
            let environment = try Environment(options: options(directory, [Self.fleet]))
            #expect(environment.get("Port", default: 0) == 8080)
            #expect(environment.get("Level", default: "") == "fleet-debug")
            // Interpolation sees the merged result.
            #expect(environment.get("Name", default: "") == "from host")
            let level = try #require(environment.configuredValue(forKey: "Level"))
            #expect(level.source.file == "etcd:/fleet/app/Environments.plist@7")
            #expect(environment.snapshot.files.first == "etcd:/fleet/app/Environments.plist@7")
        }
    }

    @Test func aHostWithNoFilesOrOnlyDropInsIsValid() throws {
        try withTemporaryDirectory { directory in
            let environment = try Environment(options: options(directory, [Self.fleet]))
            #expect(environment.get("Port", default: 0) == 80)
            try directory.writeXML(["Common": ["Port": 9090]], to: "Environments.plist.d/10-local.plist")
            try environment.reload()
            #expect(environment.get("Port", default: 0) == 9090)
        }
    }

    @Test func laterDocumentsOfTheLayerWin() throws {
        try withTemporaryDirectory { directory in
            let dropIn = ConfigurationDocument(
                origin: "etcd:/fleet/app/Environments.plist.d/50-eu.plist@9",
                data: Data(Plist.xml(["Common": ["Region": "eu"]]).utf8))
            let environment = try Environment(options: options(directory, [Self.fleet, dropIn]))
            #expect(environment.get("Region", default: "") == "eu")
            #expect(environment.get("Name", default: "") == "from eu")
        }
    }

    @Test func aMalformedDocumentIsRejectedNamingItsOrigin() throws {
        try withTemporaryDirectory { directory in
            let broken = ConfigurationDocument(
                origin: "etcd:/fleet/app/Environments.plist@11", data: Data("<plist><dict>".utf8))
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: options(directory, [broken]))
            }
            #expect(error?.file == "etcd:/fleet/app/Environments.plist@11")
        }
    }

    @Test func withoutALayerAMissingFileIsStillAnError() throws {
        _ = try withTemporaryDirectory { directory in
            #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
        }
    }
}
