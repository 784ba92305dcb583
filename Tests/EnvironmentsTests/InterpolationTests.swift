import Environments
import Foundation
import Testing

/// `${Key}`, `${env:VAR}`, `${credential:NAME}` and `$${`.
@Suite struct InterpolationTests {
    @Test func keyReferencesResolveAfterLayering() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Host": "localhost", "URL": "https://${Host}/api"],
                "Debug": ["Host": "debug.example.com"],
                "Production": ["Host": "example.com"],
            ])
            let debug = try Environment(options: directory.options())
            #expect(debug.string("URL") == "https://debug.example.com/api")
            let production = try Environment(options: directory.options(environment: "Production"))
            #expect(production.string("URL") == "https://example.com/api")
            // The interpolated value keeps the source of the value that holds the reference.
            #expect(production.configuredValue(forKey: "URL")?.source.section == "Common")
        }
    }

    @Test func referencesSeeDropInsAndOverrides() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Host": "localhost", "URL": "https://${Host}/api"]])
            try directory.writeXML("Environments.plist.d/10.plist", ["Debug": ["Host": "drop-in.example.com"]])
            let environment = try Environment(options: directory.options())
            #expect(environment.string("URL") == "https://drop-in.example.com/api")
            let outcome = try environment.setOverride("override.example.com", forKey: "Host")
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied")
                return
            }
            #expect(change.changedKeys == ["Host", "URL"])
            #expect(environment.string("URL") == "https://override.example.com/api")
        }
    }

    @Test func dottedReferencesNumbersAndBooleans() throws {
        let environment = try Environment(values: [
            "Database": ["Host": "db", "Port": 5432, "TLS": true, "Ratio": 0.5],
            "DSN": "postgres://${Database.Host}:${Database.Port}/app?tls=${Database.TLS}&r=${Database.Ratio}",
        ])
        #expect(environment.string("DSN") == "postgres://db:5432/app?tls=true&r=0.5")
    }

    @Test func chainedReferences() throws {
        let environment = try Environment(values: [
            "A": "${B}-a", "B": "${C}-b", "C": "c", "D": "${A}/${B}/${C}",
        ])
        #expect(environment.string("A") == "c-b-a")
        #expect(environment.string("B") == "c-b")
        #expect(environment.string("D") == "c-b-a/c-b/c")
    }

    @Test func referencesInArraysAndNestedDictionaries() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": [
                    "Mirrors": ["https://${Host}/a", "https://${Host}/b"],
                    "Nested": ["Deep": ["URL": "https://${Host}/deep"]],
                ],
                "Debug": ["Host": "example.com"],
            ])
            let environment = try Environment(options: directory.options())
            #expect(
                environment.array("Mirrors", default: [String]()) == [
                    "https://example.com/a", "https://example.com/b",
                ])
            #expect(environment.string("Nested.Deep.URL") == "https://example.com/deep")
        }
    }

    @Test func environmentVariables() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Debug": ["Home": "${env:HOME}/data", "Port": "${env:PORT}", "Empty": "[${env:EMPTY}]"]
            ])
            let environment = try Environment(
                options: directory.options(processEnvironment: ["HOME": "/var/lib/app", "PORT": "9000", "EMPTY": ""]))
            #expect(environment.string("Home") == "/var/lib/app/data")
            #expect(environment.int("Port", default: 0) == 9000)
            #expect(environment.string("Empty") == "[]")
            #expect(environment.configuredValue(forKey: "Home")?.isSecret == false)
        }
    }

    @Test func credentials() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.makeDirectory("credentials")
            try directory.write("credentials/db-password", text: "s3cret\n")
            try directory.write("credentials/api-token", text: "tok\r\n")
            try directory.write("credentials/two-lines", text: "line1\nline2\n\n")
            try directory.write("credentials/no-newline", text: "plain")
            try directory.writeXML([
                "Debug": [
                    "Password": "${credential:db-password}",
                    "Token": "Bearer ${credential:api-token}",
                    "TwoLines": "${credential:two-lines}",
                    "Plain": "${credential:no-newline}",
                ]
            ])
            let environment = try Environment(
                options: directory.options(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials]))
            #expect(environment.string("Password") == "s3cret")
            #expect(environment.string("Token") == "Bearer tok")
            #expect(environment.string("TwoLines") == "line1\nline2\n")
            #expect(environment.string("Plain") == "plain")
        }
    }

    @Test func escapedDollarIsLiteral() throws {
        let environment = try Environment(values: [
            "Literal": "$${NotAKey}",
            "Mixed": "cost: $5, ${Name} and $${Name}",
            "Dollar": "$",
            "Name": "x",
            "UsesLiteral": "[${Literal}]",
        ])
        #expect(environment.string("Literal") == "${NotAKey}")
        #expect(environment.string("Mixed") == "cost: $5, x and ${Name}")
        #expect(environment.string("Dollar") == "$")
        #expect(environment.string("UsesLiteral") == "[${NotAKey}]")
    }

    @Test func referenceToAReferenceToALiteral() throws {
        // Whatever order the keys are resolved in, the literal stays literal.
        for _ in 0..<5 {
            let environment = try Environment(values: ["A": "${B}", "B": "${C}", "C": "$${D}"])
            #expect(environment.string("A") == "${D}")
            #expect(environment.string("B") == "${D}")
            #expect(environment.string("C") == "${D}")
        }
    }

    private func loadError(
        _ debug: [String: Any], processEnvironment: [String: String] = [:],
        _ check: (EnvironmentError, TemporaryDirectory) throws -> Void
    ) throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": debug])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options(processEnvironment: processEnvironment))
            }
            try check(try #require(error), directory)
        }
    }

    @Test func cycleShowsTheChain() throws {
        try loadError(["A": "${B}", "B": "x${A}"]) { error, directory in
            #expect(error.code == .interpolationCycle)
            let text = error.description
            #expect(text.contains("A -> B -> A") || text.contains("B -> A -> B"))
            #expect(error.environment == "Debug")
            #expect(error.file == directory.mainFile)
            #expect(text.contains(directory.mainFile))
        }
    }

    @Test func longerCycle() throws {
        try loadError(["A": "${B}", "B": "${C}", "C": "${A}", "D": "fine"]) { error, _ in
            #expect(error.code == .interpolationCycle)
            let text = error.description
            #expect(
                ["A -> B -> C -> A", "B -> C -> A -> B", "C -> A -> B -> C"].contains { text.contains($0) })
        }
    }

    @Test func selfReference() throws {
        try loadError(["A": "${A}"]) { error, _ in
            #expect(error.code == .interpolationCycle)
            #expect(error.key == "A")
            #expect(error.description.contains("A -> A"))
        }
    }

    @Test func unresolvedReference() throws {
        try loadError(["URL": "https://${Hots}/api", "Host": "example.com"]) { error, directory in
            #expect(error.code == .unresolvedReference)
            #expect(error.key == "URL")
            #expect(error.environment == "Debug")
            #expect(error.file == directory.mainFile)
            #expect(error.description.contains("${Hots}"))
            #expect(error.description.contains("'URL'"))
        }
    }

    @Test func referenceToADictionaryOrArray() throws {
        try loadError(["Database": ["Host": "db"], "URL": "${Database}"]) { error, _ in
            #expect(error.code == .unresolvedReference)
            #expect(error.description.contains("dictionary"))
        }
        try loadError(["Hosts": ["a"], "URL": "${Hosts}"]) { error, _ in
            #expect(error.code == .unresolvedReference)
            #expect(error.description.contains("array"))
        }
    }

    @Test func missingEnvironmentVariable() throws {
        try loadError(["Home": "${env:APP_HOME}/data"], processEnvironment: ["HOME": "/root"]) {
            error, directory in
            #expect(error.code == .missingEnvironmentVariable)
            #expect(error.key == "Home")
            #expect(error.environment == "Debug")
            #expect(error.file == directory.mainFile)
            let text = error.description
            #expect(text.contains("APP_HOME"))
            #expect(text.contains("'Home'"))
            #expect(text.contains(directory.mainFile))
            #expect(text.contains("environment 'Debug'"))
        }
    }

    @Test func missingCredentialWithoutCredentialsDirectory() throws {
        try loadError(["Password": "${credential:db-password}"]) { error, directory in
            #expect(error.code == .missingCredential)
            #expect(error.key == "Password")
            #expect(error.file == directory.mainFile)
            #expect(error.description.contains("CREDENTIALS_DIRECTORY"))
            #expect(error.description.contains("db-password"))
        }
    }

    @Test func missingCredentialFile() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.makeDirectory("credentials")
            try directory.writeXML(["Debug": ["Password": "${credential:db-password}"]])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials]))
            }
            #expect(error?.code == .missingCredential)
            #expect(error?.key == "Password")
            #expect(error?.description.contains(credentials + "/db-password") == true)
        }
    }

    @Test(arguments: ["../etc/passwd", "", ".."])
    func invalidCredentialNames(name: String) throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.makeDirectory("credentials")
            try directory.writeXML(["Debug": ["Password": "${credential:\(name)}"]])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials]))
            }
            #expect(error?.code == .invalidInterpolation)
        }
    }

    /// Found by Fuzz/interpolation: the file name ended at the NUL, so this read `db-password`.
    @Test func credentialNameWithNULIsInvalid() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.makeDirectory("credentials")
            try directory.write("credentials/db-password", text: "s3cret\n")
            try directory.writeXML(["Debug": ["Password": "${credential:db-password\u{0}x}"]])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials]))
            }
            #expect(error?.code == .invalidInterpolation)
        }
    }

    @Test func unterminatedReference() throws {
        try loadError(["URL": "https://${Host/api"]) { error, _ in
            #expect(error.code == .invalidInterpolation)
            #expect(error.key == "URL")
            #expect(error.description.contains("$${"))
        }
    }

    @Test func inMemoryValuesAreInterpolated() throws {
        let environment = try Environment(values: ["Host": "h", "URL": "http://${Host}"])
        #expect(environment.string("URL") == "http://h")
    }
}

extension InterpolationTests {
    @Test func unknownReferenceKind() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Token": "${vault:token}"]])
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error?.code == .invalidInterpolation)
            #expect(error?.key == "Token")
            #expect(error?.description.contains("vault") == true)
        }
    }

    /// Found by Fuzz/interpolation: an array element's expansion was kept under its path
    /// (`Hosts[0]`), so a reference to a key of that name got the element's value.
    @Test func arrayElementsAreNotKeys() throws {
        let environment = try Environment(values: [
            "Host": "h",
            "Hosts": ["${Host}/a", "${Hosts[0]}"],
            "Hosts[0]": "real",
            "Uses": "${Hosts[0]}",
        ])
        #expect(environment.array("Hosts", default: [String]()) == ["h/a", "real"])
        #expect(environment.string("Hosts[0]") == "real")
        #expect(environment.string("Uses") == "real")
    }

    @Test func inMemoryValuesWithABadReferenceAreRejectedAsInFiles() {
        let error = #expect(throws: EnvironmentError.self) {
            try Environment(values: ["Token": "t0ken", "Broken": "${Missing}"], secretKeys: ["Token"])
        }
        #expect(error?.code == .unresolvedReference)
        #expect(error?.key == "Broken")
        let inEnvironments = #expect(throws: EnvironmentError.self) {
            try Environment(
                environments: ["Common": ["Broken": "${Missing}"], "Test": [:]],
                options: EnvironmentOptions(environment: "Test"))
        }
        #expect(inEnvironments?.code == error?.code)
    }
}
