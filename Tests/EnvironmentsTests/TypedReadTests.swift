import Environments
import Foundation
import Testing

/// `fetch(_:)`, typed reads with defaults, `get` and `require`.
@Suite struct TypedReadTests {
    private let values: [String: Any] = [
        "Common": [
            "Name": "service",
            "Port": 8080,
            "PortText": "8081",
            "Ratio": 0.25,
            "Whole": 3.0,
            "Enabled": true,
            "YesText": "yes",
            "OffText": "off",
            "One": 1,
            "BaseURL": "https://api.example.com/v1",
            "NoScheme": "example.com",
            "Timeout": "500ms",
            "Grace": "1.5s",
            "Long": "1h 30min",
            "Seconds": 3,
            "FractionalSeconds": 0.25,
            "BadDuration": "soon",
            "Hosts": ["a.example.com", "b.example.com"],
            "Ports": [1, 2, 3],
            "Mixed": ["a", 1],
            "Limits": ["Read": 10, "Write": 20],
            "Database": ["Host": "db", "Port": 5432],
        ],
        "Debug": ["Name": "service-debug"],
    ]

    @Test func fetchReturnsRawValues() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.fetch("Name") as? String == "service-debug")
            #expect(environment.fetch("Port") as? Int == 8080)
            #expect(environment.fetch("Ratio") as? Double == 0.25)
            #expect(environment.fetch("Enabled") as? Bool == true)
            #expect(environment.fetch("Hosts") as? [String] == ["a.example.com", "b.example.com"])
            let mixed = try #require(environment.fetch("Mixed") as? [Any])
            #expect(mixed.count == 2)
            #expect(mixed[0] as? String == "a")
            #expect(mixed[1] as? Int == 1)
            let limits = try #require(environment.fetch("Limits") as? [String: Any])
            #expect(limits["Read"] as? Int == 10)
            #expect(limits["Write"] as? Int == 20)
            #expect(environment.fetch("Database.Port") as? Int == 5432)
            #expect(environment.fetch("Missing") == nil)
            // The snapshot answers the same way.
            #expect(environment.snapshot.fetch("Name") as? String == "service-debug")
        }
    }

    @Test func strings() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Name", default: "x") == "service-debug")
            #expect(environment.get("Missing", default: "fallback") == "fallback")
            #expect(environment.get("Port", default: "x") == "8080")
            #expect(environment.get("Enabled", default: "x") == "true")
            #expect(environment.get("Hosts", default: "x") == "x")
            #expect((try? environment.require("Name", as: String.self)) == "service-debug")
            #expect((try? environment.require("Missing", as: String.self)) == nil)
            #expect((try? environment.require("Limits", as: String.self)) == nil)
            #expect(environment.snapshot.get("Name", default: "x") == "service-debug")
        }
    }

    @Test func integers() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Port", default: 0) == 8080)
            #expect(environment.get("PortText", default: 0) == 8081)
            #expect(environment.get("Whole", default: 0) == 3)
            #expect(environment.get("Ratio", default: -1) == -1)
            #expect(environment.get("Name", default: -1) == -1)
            #expect(environment.get("Missing", default: 42) == 42)
        }
    }

    @Test func doubles() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Ratio", as: Double.self, default: 0) == 0.25)
            #expect(environment.get("Port", as: Double.self, default: 0) == 8080)
            #expect(environment.get("PortText", as: Double.self, default: 0) == 8081)
            #expect(environment.get("Name", as: Double.self, default: -1) == -1)
            #expect(environment.get("Missing", as: Double.self, default: 1.5) == 1.5)
        }
    }

    @Test func booleans() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Enabled", default: false) == true)
            #expect(environment.get("YesText", default: false) == true)
            #expect(environment.get("OffText", default: true) == false)
            #expect(environment.get("One", default: false) == true)
            #expect(environment.get("Port", default: false) == false)
            #expect(environment.get("Name", default: true) == true)
            #expect(environment.get("Missing", default: true) == true)
        }
    }

    @Test func urls() throws {
        try withEnvironment(loading: values) { environment, _ in
            let fallback = URL(string: "http://localhost")!
            #expect(environment.get("BaseURL", default: fallback) == URL(string: "https://api.example.com/v1")!)
            #expect(environment.get("NoScheme", default: fallback) == fallback)
            #expect(environment.get("Port", default: fallback) == fallback)
            #expect(environment.get("Missing", default: fallback) == fallback)
        }
    }

    @Test func durations() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Timeout", default: Duration.zero) == .milliseconds(500))
            #expect(environment.get("Grace", default: Duration.zero) == .milliseconds(1500))
            #expect(environment.get("Long", default: Duration.zero) == .seconds(5400))
            #expect(environment.get("Seconds", default: Duration.zero) == .seconds(3))
            #expect(environment.get("FractionalSeconds", default: Duration.zero) == .milliseconds(250))
            #expect(environment.get("BadDuration", default: Duration.seconds(7)) == .seconds(7))
            #expect(environment.get("Missing", default: Duration.seconds(9)) == .seconds(9))
        }
    }

    @Test(arguments: [
        ("500ms", Duration.milliseconds(500)),
        ("1.5s", .milliseconds(1500)),
        ("2", .seconds(2)),
        ("2min", .seconds(120)),
        ("1h 30min", .seconds(5400)),
        ("100us", .microseconds(100)),
        ("250 msec", .milliseconds(250)),
        ("1d", .seconds(86400)),
    ])
    func durationStrings(text: String, expected: Duration) throws {
        let environment = try Environment(values: ["D": .string(text)])
        #expect(environment.get("D", default: Duration.zero) == expected)
        #expect(Duration(settingValue: .string(text)) == expected)
    }

    @Test(arguments: ["", "ms", "5 parsecs", "-1s", "1.2.3s"])
    func invalidDurationStrings(text: String) {
        #expect(Duration(settingValue: .string(text)) == nil)
    }

    @Test func arrays() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Hosts", default: [String]()) == ["a.example.com", "b.example.com"])
            #expect(environment.get("Ports", default: [Int]()) == [1, 2, 3])
            #expect(environment.get("Ports", default: [String]()) == ["1", "2", "3"])
            #expect(environment.get("Hosts", default: [0]) == [0])
            #expect(environment.get("Mixed", default: [7]) == [7])
            #expect(environment.get("Missing", default: ["x"]) == ["x"])
            #expect(environment.get("Name", default: ["x"]) == ["x"])
        }
    }

    @Test func dictionaries() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(environment.get("Limits", default: [String: Int]()) == ["Read": 10, "Write": 20])
            #expect(environment.get("Database", default: [String: String]()) == ["Host": "db", "Port": "5432"])
            #expect(environment.get("Database", default: ["x": 1]) == ["x": 1])
            #expect(environment.get("Missing", default: ["x": 1]) == ["x": 1])
            #expect(
                environment.get("Database", default: [String: SettingValue]())
                    == ["Host": .string("db"), "Port": .integer(5432)])
        }
    }

    @Test func requireConvertsOrThrowsForAMissingKey() throws {
        try withEnvironment(loading: values) { environment, _ in
            let port = try environment.require("Port", as: Int.self)
            let timeout = try environment.require("Timeout", as: Duration.self)
            #expect(port == 8080)
            #expect(timeout == .milliseconds(500))
            let missing = #expect(throws: EnvironmentError.self) { try environment.require("Missing", as: Int.self) }
            #expect(missing?.code == .missingKey)
        }
    }

    /// A type of the application's own: errors name it by its Swift name, and the library's
    /// types inside collections by the file's words.
    @Test func typeMismatchNamesAnApplicationsOwnType() throws {
        struct LogFormat: SettingValueConvertible {
            init?(settingValue: SettingValue) {
                guard case .string("json") = settingValue else { return nil }
            }
        }
        let environment = try Environment(values: ["Format": 5, "Formats": ["json", "text"], "Ports": [1, "x"]])
        let own = #expect(throws: EnvironmentError.self) { try environment.require("Format", as: LogFormat.self) }
        #expect(own?.description.contains("expected LogFormat") == true, "\(String(describing: own))")
        let array = #expect(throws: EnvironmentError.self) { try environment.require("Ports", as: [Int].self) }
        #expect(array?.description.contains("expected array of integer") == true, "\(String(describing: array))")
        let nested = #expect(throws: EnvironmentError.self) { try environment.require("Formats", as: [LogFormat].self) }
        #expect(nested?.description.contains("expected array of LogFormat") == true, "\(String(describing: nested))")
    }

    @Test func typeMismatchNamesKeyTypesAndSource() throws {
        try withEnvironment(loading: values) { environment, directory in
            let thrown = try #require(throws: EnvironmentError.self) { try environment.require("Name", as: Int.self) }
            #expect(thrown.code == .typeMismatch)
            #expect(thrown.key == "Name")
            #expect(thrown.environment == "Debug")
            #expect(thrown.file == directory.mainFile)
            let text = thrown.description
            #expect(text.contains("'Name'"))
            #expect(text.contains("expected integer"))
            #expect(text.contains("is a string"))
            #expect(text.contains("service-debug"))
            #expect(text.contains("\(directory.mainFile) [Debug]"))
            #expect(text.contains("environment 'Debug'"))
        }
    }

    @Test func typeMismatchOnArraysAndDictionaries() throws {
        try withEnvironment(loading: values) { environment, directory in
            let error = #expect(throws: EnvironmentError.self) {
                try environment.require("Hosts", as: [Int].self)
            }
            #expect(error?.code == .typeMismatch)
            #expect(error?.description.contains("'Hosts'") == true)
            #expect(error?.description.contains("expected array of integer") == true)
            #expect(error?.description.contains("\(directory.mainFile) [Common]") == true)
        }
    }

    @Test func requireReturnsTheValue() throws {
        try withEnvironment(loading: values) { environment, _ in
            #expect(try environment.require("Port", as: Int.self) == 8080)
            #expect(try environment.require("Database.Host", as: String.self) == "db")
            let url: URL = try environment.require("BaseURL")
            #expect(url.host == "api.example.com")
        }
    }

    @Test func requireNamesKeyEnvironmentAndFilesSearched() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(values)
            let dropIn = try directory.writeXML(["Debug": ["Extra": 1]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(options: directory.options())
            let thrown = try #require(throws: EnvironmentError.self) {
                try environment.require("Database.Password", as: String.self)
            }
            #expect(thrown.code == .missingKey)
            #expect(thrown.key == "Database.Password")
            #expect(thrown.environment == "Debug")
            #expect(thrown.searchedFiles == [directory.mainFile, dropIn])
            let text = thrown.description
            #expect(text.contains("'Database.Password'"))
            #expect(text.contains("'Debug'"))
            #expect(text.contains(directory.mainFile))
            #expect(text.contains(dropIn))
        }
    }

    @Test func requireOnASnapshot() throws {
        try withEnvironment(loading: values) { environment, directory in
            let snapshot = environment.snapshot
            let port = try snapshot.require("Port", as: Int.self)
            #expect(port == 8080)
            let error = #expect(throws: EnvironmentError.self) { try snapshot.require("Nope", as: Int.self) }
            #expect(error?.code == .missingKey)
            #expect(error?.searchedFiles == [directory.mainFile])
        }
    }

    @Test func requireInMemory() throws {
        let environment = try Environment(values: ["A": 1], environmentName: "Unit")
        let error = #expect(throws: EnvironmentError.self) { try environment.require("B", as: Int.self) }
        #expect(error?.code == .missingKey)
        #expect(error?.environment == "Unit")
        #expect(error?.description.contains("'B'") == true)
    }

    @Test func inMemoryValuesWithDottedKeys() throws {
        let environment = try Environment(
            values: ["Database.Host": "db", "Database.Port": 5432, "Database": ["Name": "app"], "Debug": true])
        #expect(environment.environmentName == "Test")
        #expect((try? environment.require("Database.Host", as: String.self)) == "db")
        #expect(environment.get("Database.Port", default: 0) == 5432)
        #expect((try? environment.require("Database.Name", as: String.self)) == "app")
        #expect(environment.get("Debug", default: false) == true)
        #expect(environment.snapshot.files.isEmpty)
        #expect(environment.options == nil)
        #expect(environment.configuredValue(forKey: "Database.Host")?.source == .defaults)
    }
}
