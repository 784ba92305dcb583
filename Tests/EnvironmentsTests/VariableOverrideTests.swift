import Environments
import Foundation
import Testing

/// Environment variables with ``EnvironmentOptions/variablePrefix`` (`APP_`) set keys above the
/// files and below runtime overrides: `APP_Database__Port=6432` sets `Database.Port`.
@Suite struct VariableOverrideTests {
    private func environment(
        _ directory: TemporaryDirectory, _ variables: [String: String], secretKeys: Set<String> = [],
        defaults: [String: SettingValue] = [:]
    ) throws -> Environment {
        try Environment(
            options: directory.options(processEnvironment: variables, defaults: defaults, secretKeys: secretKeys))
    }

    private static var file: [String: Any] {
        [
            "Common": [
                "Database": ["Host": "db.example", "Port": 5432, "Ratio": 0.5, "TLS": true],
                "Hosts": ["a.example", "b.example"],
                "Name": "from the file",
            ],
            "Debug": [:],
            "Production": [:],
        ]
    }

    @Test func aNestedKeyTakesTheTypeOfTheValueItReplaces() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(
                directory,
                ["APP_Database__Port": "6432", "APP_Database__Ratio": "0.75", "APP_Database__TLS": "no"])
            #expect(environment.value(forKey: "Database.Port") == .integer(6432))
            #expect(environment.value(forKey: "Database.Ratio") == .real(0.75))
            #expect(environment.value(forKey: "Database.TLS") == .bool(false))
            #expect(environment.value(forKey: "Database.Host") == .string("db.example"))
            let source = try #require(environment.configuredValue(forKey: "Database.Port")?.source)
            #expect(source.layer == .environmentVariable)
            #expect(source.description == "$APP_Database__Port")
        }
    }

    @Test func levelsMatchIgnoringCaseWhenNoKeyIsSpelledThatWay() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(directory, ["APP_DATABASE__PORT": "6433"])
            #expect(environment.value(forKey: "Database.Port") == .integer(6433))
            #expect(environment.value(forKey: "DATABASE.PORT") == nil)
        }
    }

    @Test func aKeyNoLayerHasIsAddedAsAString() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(directory, ["APP_Feature__Flag": "42"])
            #expect(environment.value(forKey: "Feature.Flag") == .string("42"))
        }
    }

    @Test func theSelectingVariablesAreNoKeys() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(directory, ["APP_ENVIRONMENT": "Production", "APP_INSTANCE": "eu"])
            #expect(environment.environmentName == "Production")
            #expect(environment.value(forKey: "ENVIRONMENT") == nil)
            #expect(environment.value(forKey: "INSTANCE") == nil)
        }
    }

    @Test func runtimeOverridesWinOverVariablesAndVariablesOverFiles() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(directory, ["APP_Name": "from the variable"])
            #expect((try? environment.require("Name", as: String.self)) == "from the variable")
            try environment.setOverride("from an override", forKey: "Name")
            #expect((try? environment.require("Name", as: String.self)) == "from an override")
            try environment.setOverride(nil, forKey: "Name")
            #expect((try? environment.require("Name", as: String.self)) == "from the variable")
            // A reload applies the same variables again.
            try directory.writeXML(
                ["Common": ["Name": "edited", "Database": ["Port": 1]], "Debug": [:], "Production": [:]])
            try environment.reload()
            #expect((try? environment.require("Name", as: String.self)) == "from the variable")
        }
    }

    @Test func theTextIsNotInterpolated() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(directory, ["APP_Name": "${Database.Host} and $${x} and $"])
            #expect((try? environment.require("Name", as: String.self)) == "${Database.Host} and $${x} and $")
        }
    }

    @Test func aValueThatDoesNotParseIsAnErrorNamingTheVariable() throws {
        try withTemporaryDirectory { directory in
            let file = try directory.writeXML(Self.file)
            let error = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_Database__Port": "64x"])
            }
            #expect(error.code == .typeMismatch)
            #expect(error.key == "Database.Port")
            #expect(error.description.contains("$APP_Database__Port '64x' is no integer"))
            #expect(error.description.contains(file))
        }
    }

    @Test func aSecretValueThatDoesNotParseIsNotQuoted() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let error = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_Database__Port": "hunter2-port"], secretKeys: ["Database"])
            }
            #expect(error.code == .typeMismatch)
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func aSecretKeySetByAVariableStaysSecret() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let environment = try environment(
                directory, ["APP_Database__Host": "secret.example"], secretKeys: ["Database.Host"])
            let configured = try #require(environment.configuredValue(forKey: "Database.Host"))
            #expect(configured.value == .string("secret.example"))
            #expect(configured.source.layer == .environmentVariable)
            #expect(configured.isSecret)
            #expect(!configured.description.contains("secret.example"))
        }
    }

    @Test func dictionariesAndArraysAreNotReplacedByOneVariable() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            let dictionary = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_Database": "x"])
            }
            #expect(dictionary.code == .typeMismatch)
            #expect(dictionary.hint?.contains("APP_Database__NAME") == true)
            let array = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_Hosts": "c.example"])
            }
            #expect(array.code == .typeMismatch)
            let below = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_Name__Part": "x"])
            }
            #expect(below.code == .typeMismatch)
            #expect(below.description.contains("not a dictionary"))
        }
    }

    @Test func malformedAndAmbiguousNamesAreErrors() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            for name in ["APP_", "APP_Database____Port", "APP_Database__", "APP_A.B"] {
                let error = try #require(throws: EnvironmentError.self, "\(name)") {
                    try environment(directory, [name: "1"])
                }
                #expect(error.code == .invalidName, "\(name)")
            }
            let twice = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_Database__Port": "1", "APP_DATABASE__PORT": "2"])
            }
            #expect(twice.description.contains("$APP_DATABASE__PORT and $APP_Database__Port both set 'Database.Port'"))
            let ambiguous = try #require(throws: EnvironmentError.self) {
                try environment(directory, ["APP_NAME": "x"], defaults: ["name": "lower"])
            }
            #expect(ambiguous.description.contains("'Name' and 'name'"))
        }
    }

    @Test func thePrefixIsAnOptionAndTheLayerCanBeTurnedOff() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(Self.file)
            var options = directory.options(processEnvironment: ["APP_Name": "app", "SVC_Name": "svc"])
            options.variablePrefix = "SVC_"
            #expect((try Environment(options: options).require("Name", as: String.self)) == "svc")
            options.variablePrefix = nil
            #expect((try Environment(options: options).require("Name", as: String.self)) == "from the file")
        }
    }
}
