import Environments
import Foundation
import TestSupport
import Testing

/// `${Key}`, `${env:VAR}`, `${credential:NAME}` and `$${`.
@Suite(.blocking) struct InterpolationTests {
    @Test func keyReferencesResolveAfterLayering() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Host": "localhost", "URL": "https://${Host}/api"],
                "Debug": ["Host": "debug.example.com"],
                "Production": ["Host": "example.com"],
            ])
            let debug = try Environment(options: directory.options())
            #expect((try? debug.require("URL", as: String.self)) == "https://debug.example.com/api")
            let production = try Environment(options: directory.options(environment: "Production"))
            #expect((try? production.require("URL", as: String.self)) == "https://example.com/api")
            // The interpolated value keeps the source of the value that holds the reference.
            #expect(production.configuredValue(forKey: "URL")?.source.section == "Common")
        }
    }

    @Test func referencesSeeDropInsAndOverrides() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Host": "localhost", "URL": "https://${Host}/api"]])
            try directory.writeXML(["Debug": ["Host": "drop-in.example.com"]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(options: directory.options())
            #expect((try? environment.require("URL", as: String.self)) == "https://drop-in.example.com/api")
            let outcome = try environment.setOverride("override.example.com", forKey: "Host")
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied")
                return
            }
            #expect(change.changedKeys == ["Host", "URL"])
            #expect((try? environment.require("URL", as: String.self)) == "https://override.example.com/api")
        }
    }

    @Test func dottedReferencesNumbersAndBooleans() throws {
        let environment = try Environment(values: [
            "Database": ["Host": "db", "Port": 5432, "TLS": true, "Ratio": 0.5],
            "DSN": "postgres://${Database.Host}:${Database.Port}/app?tls=${Database.TLS}&r=${Database.Ratio}",
        ])
        #expect((try? environment.require("DSN", as: String.self)) == "postgres://db:5432/app?tls=true&r=0.5")
    }

    @Test func chainedReferences() throws {
        let environment = try Environment(values: [
            "A": "${B}-a", "B": "${C}-b", "C": "c", "D": "${A}/${B}/${C}",
        ])
        #expect((try? environment.require("A", as: String.self)) == "c-b-a")
        #expect((try? environment.require("B", as: String.self)) == "c-b")
        #expect((try? environment.require("D", as: String.self)) == "c-b-a/c-b/c")
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
                environment.get("Mirrors", default: [String]()) == [
                    "https://example.com/a", "https://example.com/b",
                ])
            #expect((try? environment.require("Nested.Deep.URL", as: String.self)) == "https://example.com/deep")
        }
    }

    @Test func environmentVariables() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Debug": ["Home": "${env:HOME}/data", "Port": "${env:PORT}", "Empty": "[${env:EMPTY}]"]
            ])
            let environment = try Environment(
                options: directory.options(processEnvironment: ["HOME": "/var/lib/app", "PORT": "9000", "EMPTY": ""]))
            #expect((try? environment.require("Home", as: String.self)) == "/var/lib/app/data")
            #expect(environment.get("Port", default: 0) == 9000)
            #expect((try? environment.require("Empty", as: String.self)) == "[]")
            #expect(environment.configuredValue(forKey: "Home")?.isSecret == false)
        }
    }

    @Test func credentials() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.writeCredentials([
                "db-password": "s3cret\n", "api-token": "tok\r\n", "two-lines": "line1\nline2\n\n",
                "no-newline": "plain",
            ])
            try directory.writeXML([
                "Debug": [
                    "Password": "${credential:db-password}",
                    "Token": "Bearer ${credential:api-token}",
                    "TwoLines": "${credential:two-lines}",
                    "Plain": "${credential:no-newline}",
                ]
            ])
            let environment = try Environment(options: directory.options(processEnvironment: credentials))
            #expect((try? environment.require("Password", as: String.self)) == "s3cret")
            #expect((try? environment.require("Token", as: String.self)) == "Bearer tok")
            #expect((try? environment.require("TwoLines", as: String.self)) == "line1\nline2\n")
            #expect((try? environment.require("Plain", as: String.self)) == "plain")
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
        #expect((try? environment.require("Literal", as: String.self)) == "${NotAKey}")
        #expect((try? environment.require("Mixed", as: String.self)) == "cost: $5, x and ${Name}")
        #expect((try? environment.require("Dollar", as: String.self)) == "$")
        #expect((try? environment.require("UsesLiteral", as: String.self)) == "[${NotAKey}]")
    }

    @Test func referenceToAReferenceToALiteral() throws {
        // Whatever order the keys are resolved in, the literal stays literal.
        for _ in 0..<5 {
            let environment = try Environment(values: ["A": "${B}", "B": "${C}", "C": "$${D}"])
            #expect((try? environment.require("A", as: String.self)) == "${D}")
            #expect((try? environment.require("B", as: String.self)) == "${D}")
            #expect((try? environment.require("C", as: String.self)) == "${D}")
        }
    }

    /// Loads `debug` as the `Debug` section, which must fail, and checks the error. With
    /// `credentials` (names and texts), `$CREDENTIALS_DIRECTORY` is the directory `credentials`
    /// that holds them.
    private func loadError(
        _ debug: [String: Any], processEnvironment: [String: String] = [:], credentials: [String: String]? = nil,
        _ check: (EnvironmentError, TemporaryDirectory) throws -> Void
    ) throws {
        try withTemporaryDirectory { directory in
            var processEnvironment = processEnvironment
            if let credentials { processEnvironment.merge(try directory.writeCredentials(credentials)) { $1 } }
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

    /// A reference that cannot be resolved, and what its error says.
    struct BadReference: CustomTestStringConvertible, Sendable {
        let testDescription: String
        let debug: [String: any Sendable]
        let code: EnvironmentError.Code
        let key: String
        let mentions: String
    }

    static let badReferences = [
        BadReference(
            testDescription: "a key that refers to itself", debug: ["A": "${A}"], code: .interpolationCycle,
            key: "A", mentions: "A -> A"),
        BadReference(
            testDescription: "a reference that is not terminated", debug: ["URL": "https://${Host/api"],
            code: .invalidInterpolation, key: "URL", mentions: "$${"),
        BadReference(
            testDescription: "a reference to a dictionary", debug: ["Database": ["Host": "db"], "URL": "${Database}"],
            code: .unresolvedReference, key: "URL", mentions: "dictionary"),
        BadReference(
            testDescription: "a reference to an array", debug: ["Hosts": ["a"], "URL": "${Hosts}"],
            code: .unresolvedReference, key: "URL", mentions: "array"),
    ]

    @Test(arguments: badReferences)
    func aBadReferenceNamesItsKeyAndWhatIsWrong(_ bad: BadReference) throws {
        try loadError(bad.debug) { error, _ in
            #expect(error.code == bad.code)
            #expect(error.key == bad.key)
            #expect(error.description.contains(bad.mentions))
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
        try loadError(["Password": "${credential:db-password}"], credentials: [:]) { error, directory in
            #expect(error.code == .missingCredential)
            #expect(error.key == "Password")
            #expect(error.description.contains(directory.path("credentials/db-password")))
        }
    }

    /// The error for a credential the unit does not give names the reference's file and line,
    /// and the unit settings that give one (the encrypted one `envctl credential set` writes,
    /// and the plain one); the other credential's text, read before, is not in it.
    @Test func missingCredentialNamesTheUnitSettingAndTheReferenceLine() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.makeDirectory("credentials")
            try "s3cret-Staple-31\n".write(toFile: credentials + "/db-password", atomically: true, encoding: .utf8)
            _ = try directory.write(
                "Environments.plist",
                text: """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <plist version="1.0">
                    <dict>
                        <key>Debug</key>
                        <dict>
                            <key>Password</key>
                            <string>${credential:db-password}</string>
                            <key>Token</key>
                            <string>Bearer ${credential:api-token}</string>
                        </dict>
                    </dict>
                    </plist>
                    """)
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(
                    options: directory.options(processEnvironment: ["CREDENTIALS_DIRECTORY": credentials]))
            }
            #expect(error?.code == .missingCredential)
            #expect(error?.key == "Token")
            #expect(error?.line == 9)
            let text = error?.description ?? ""
            #expect(text.contains(directory.mainFile + ":9"), "\(text)")
            #expect(text.contains("LoadCredentialEncrypted=api-token:/etc/credstore.encrypted/"), "\(text)")
            #expect(text.contains("envctl credential set api-token"), "\(text)")
            #expect(text.contains("LoadCredential=api-token:/path/to/secret"), "\(text)")
            #expect(text.contains("restart"), "\(text)")
            #expect(!text.contains("s3cret-Staple-31"))

            let without = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options())
            }
            // Whichever reference is expanded first: its own line and name.
            let expected = without?.key == "Token" ? (9, "api-token") : (7, "db-password")
            #expect(without?.line == expected.0)
            #expect(without?.description.contains("LoadCredentialEncrypted=\(expected.1):") == true)
        }
    }

    /// A name that is no file name in the credentials directory. `db-password\0x` was found by
    /// Fuzz/interpolation: the file name ended at the NUL, so it read `db-password`.
    @Test(arguments: ["../etc/passwd", "", "..", "db-password\u{0}x"])
    func invalidCredentialNames(name: String) throws {
        try loadError(["Password": "${credential:\(name)}"], credentials: ["db-password": "s3cret\n"]) { error, _ in
            #expect(error.code == .invalidInterpolation)
        }
    }

    @Test func inMemoryValuesAreInterpolated() throws {
        let environment = try Environment(values: ["Host": "h", "URL": "http://${Host}"])
        #expect((try? environment.require("URL", as: String.self)) == "http://h")
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
        #expect(environment.get("Hosts", default: [String]()) == ["h/a", "real"])
        #expect((try? environment.require("Hosts[0]", as: String.self)) == "real")
        #expect((try? environment.require("Uses", as: String.self)) == "real")
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

/// Interpolation costs bounded time, memory and stack whatever the files hold: references are
/// followed without recursion, one value may grow to 1 MiB and the whole configuration to
/// 16 MiB; past that, an `interpolationLimitExceeded` error names the key and the file.
@Suite(.blocking) struct InterpolationLimitTests {
    /// The documented caps (`Interpolator.maximumValueBytes`, `maximumTotalBytes`).
    static let valueLimit = 1 << 20
    static let totalLimit = 16 << 20

    /// `A1` = `seed`, then `A2 = ${A1}${A1}` and so on: `A(n)` is 2^(n-1) times the seed.
    static func doubling(_ count: Int, seed: String = "x") -> [String: Any] {
        var values: [String: Any] = ["A1": seed]
        for index in 2...count { values["A\(index)"] = "${A\(index - 1)}${A\(index - 1)}" }
        return values
    }

    @Test func doublingDropInIsRejectedNamingTheFileTheKeyAndTheLimit() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Host": "localhost"], "Debug": [:]])
            let dropIn = try directory.writeXML(
                ["Debug": Self.doubling(30)], to: "Environments.plist.d/50-hostile.plist")
            let error = try #require(
                #expect(throws: EnvironmentError.self) { try Environment(options: directory.options()) })
            #expect(error.code == .interpolationLimitExceeded)
            // A21 is 2^20 bytes, exactly the cap: A22 is the first value over it.
            #expect(error.key == "A22")
            #expect(error.file == dropIn)
            #expect(error.environment == "Debug")
            let text = error.description
            #expect(text.contains(dropIn))
            #expect(text.contains("'A22'"))
            #expect(text.contains("1 MiB"))
            #expect(text.count < 1_000)
        }
    }

    @Test func oneValueExactlyAtTheCapLoadsOneByteMoreDoesNot() throws {
        let kibibyte = String(repeating: "x", count: 1024)
        let atCap = String(repeating: "${K}", count: 1024)
        let environment = try Environment(values: ["K": .string(kibibyte), "Full": .string(atCap)])
        #expect((try? environment.require("Full", as: String.self))?.utf8.count == Self.valueLimit)

        let error = #expect(throws: EnvironmentError.self) {
            try Environment(values: ["K": .string(kibibyte), "Full": .string(atCap), "Over": "${Full}y"])
        }
        #expect(error?.code == .interpolationLimitExceeded)
        #expect(error?.key == "Over")
        // The same inside an array: its element is named.
        let inArray = #expect(throws: EnvironmentError.self) {
            try Environment(values: ["K": .string(kibibyte), "List": .array(["ok", .string(atCap + "y")])])
        }
        #expect(inArray?.code == .interpolationLimitExceeded)
        #expect(inArray?.key == "List[1]")
    }

    @Test func wholeConfigurationExactlyAtTheCapLoadsOneByteMoreDoesNot() throws {
        // Sixteen values of exactly 1 MiB each: 16 MiB built, the whole cap.
        var values: [String: SettingValue] = [
            "K": .string(String(repeating: "k", count: 1024)), "Full0": .string(String(repeating: "${K}", count: 1024)),
        ]
        for index in 1..<16 { values["Full\(index)"] = "${Full0}" }
        let environment = try Environment(values: values)
        #expect((try? environment.require("Full15", as: String.self))?.utf8.count == Self.valueLimit)

        values["OneMore"] = "${K}"
        let error = #expect(throws: EnvironmentError.self) { try Environment(values: values) }
        #expect(error?.code == .interpolationLimitExceeded)
        #expect(error?.description.contains("16 MiB") == true)
        #expect(error?.description.contains("whole configuration") == true)
    }

    @Test func limitErrorsNeverShowTheValues() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.writeCredentials(["db-password": "pa55word\n"])
            var debug = Self.doubling(25, seed: "${credential:db-password}")
            debug["Token"] = "t0ken-t0ken"
            debug["Copies"] = ["${Token}${Token}"]
            try directory.writeXML(["Debug": debug, "Secrets": ["Token"]])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options(processEnvironment: credentials))
            }
            #expect(error?.code == .interpolationLimitExceeded)
            let text = error?.description ?? ""
            #expect(!text.contains("pa55word"))
            #expect(!text.contains("t0ken"))
        }
    }

    @Test func credentialLongerThanTheCapIsRejected() throws {
        try withTemporaryDirectory { directory in
            let credentials = try directory.writeCredentials([
                "huge": String(repeating: "s", count: Self.valueLimit + 1),
                "fits": String(repeating: "f", count: Self.valueLimit) + "\n",
            ])
            try directory.writeXML(["Debug": ["Fits": "${credential:fits}"]])
            let fits = try Environment(options: directory.options(processEnvironment: credentials))
            #expect((try? fits.require("Fits", as: String.self))?.utf8.count == Self.valueLimit)
            #expect(fits.configuredValue(forKey: "Fits")?.isSecret == true)

            try directory.writeXML(["Debug": ["Huge": "${credential:huge}"]])
            let error = #expect(throws: EnvironmentError.self) {
                try Environment(options: directory.options(processEnvironment: credentials))
            }
            #expect(error?.code == .interpolationLimitExceeded)
            #expect(error?.key == "Huge")
            #expect(error?.description.contains("sss") == false)
        }
    }

    /// `K0 = end`, and each further key refers to the one before: forwards (`K1 = ${K0}`),
    /// backwards (`K0 = ${K1}`, the last one literal) and shuffled, so that whichever key
    /// resolution starts from, it walks a long chain.
    static func chain(_ length: Int, order: [Int], end: String) -> [String: SettingValue] {
        var values: [String: SettingValue] = [:]
        values.reserveCapacity(length)
        values["K\(order[0])"] = .string(end)
        for position in 1..<length { values["K\(order[position])"] = .string("${K\(order[position - 1])}") }
        return values
    }

    static let chainLength = 100_000
    static let orders: [(String, [Int])] = {
        var generator = SystemRandomNumberGenerator()
        return [
            ("forwards", Array(0..<chainLength)), ("backwards", Array((0..<chainLength).reversed())),
            ("shuffled", Array(0..<chainLength).shuffled(using: &generator)),
        ]
    }()

    @Test(arguments: 0..<3)
    func chainsHundredThousandDeepResolveInEveryKeyOrder(order: Int) throws {
        let (name, keys) = Self.orders[order]
        // The chain's first key is secret and holds an escape: every key that copies it holds
        // the literal `${literal}` and is secret too.
        let environment = try Environment(
            values: Self.chain(Self.chainLength, order: keys, end: "$${literal}"), secretKeys: ["K\(keys[0])"])
        #expect(environment.snapshot.leafKeys.count == Self.chainLength)
        for position in [1, Self.chainLength / 2, Self.chainLength - 1] {
            let entry = try #require(environment.configuredValue(forKey: "K\(keys[position])"))
            #expect(entry.value == .string("${literal}"), "\(name)")
            #expect(entry.isSecret, "\(name)")
        }
    }

    @Test func cycleHundredThousandLongIsAnErrorWithAShortMessage() throws {
        var values = Self.chain(Self.chainLength, order: Array(0..<Self.chainLength), end: "")
        values["K0"] = .string("${K\(Self.chainLength - 1)}")
        let error = #expect(throws: EnvironmentError.self) { try Environment(values: values) }
        #expect(error?.code == .interpolationCycle)
        let text = error?.description ?? ""
        #expect(text.count < 1_000)
        #expect(text.contains("more)"))
    }

    @Test func chainEndingInAMissingKeyIsAnErrorWithAShortMessage() throws {
        let values = Self.chain(Self.chainLength, order: Array(0..<Self.chainLength), end: "${Missing}")
        let error = #expect(throws: EnvironmentError.self) { try Environment(values: values) }
        #expect(error?.code == .unresolvedReference)
        #expect(error?.key == "K0")
        #expect((error?.description.count ?? .max) < 1_000)
        #expect(error?.description.contains("${Missing}") == true)
    }

    @Test func referenceAsLongAsAFileMakesAShortError() throws {
        let name = String(repeating: "N", count: 1 << 20)
        for (value, code) in [
            ("${\(name)}", EnvironmentError.Code.unresolvedReference), ("${env:\(name)}", .missingEnvironmentVariable),
            ("${credential:\(name)}", .missingCredential), ("${\(name):x}", .invalidInterpolation),
        ] {
            let error = #expect(throws: EnvironmentError.self) { try Environment(values: ["Long": .string(value)]) }
            #expect(error?.code == code)
            #expect((error?.description.count ?? .max) < 1_000)
        }
    }

    @Test func wideFanOutAndFanIn() throws {
        // One value refers to 100,000 keys, and 10,000 keys refer to one.
        var values: [String: SettingValue] = ["Shared": "https://example.com/${Leaf0}"]
        var all = ""
        for index in 0..<Self.chainLength {
            values["Leaf\(index)"] = "v"
            all += "${Leaf\(index)}"
        }
        for index in 0..<10_000 { values["Copy\(index)"] = .string("${Shared}/\(index)") }
        values["All"] = .string(all)
        values["Secret"] = "${Leaf7}"
        let environment = try Environment(values: values, secretKeys: ["Leaf7"])
        #expect((try? environment.require("All", as: String.self)) == String(repeating: "v", count: Self.chainLength))
        #expect((try? environment.require("Copy9999", as: String.self)) == "https://example.com/v/9999")
        // Secrecy follows references however wide: All copies Leaf7.
        #expect(environment.configuredValue(forKey: "All")?.isSecret == true)
        #expect(environment.configuredValue(forKey: "Copy1")?.isSecret == false)
    }

    @Test func doublingInArraysAndWithEveryShape() throws {
        // A fan-out of references that grows as Fibonacci numbers: F(n) = ${F(n-1)}${F(n-2)}.
        var fibonacci: [String: SettingValue] = ["F0": "a", "F1": "b"]
        for index in 2..<60 { fibonacci["F\(index)"] = .string("${F\(index - 1)}${F\(index - 2)}") }
        let error = #expect(throws: EnvironmentError.self) { try Environment(values: fibonacci) }
        #expect(error?.code == .interpolationLimitExceeded)
        // Array elements that copy a long value: each within the cap, but 20 MB together.
        let elements: [String: SettingValue] = [
            "K": .string(String(repeating: "k", count: 1000)), "Big": .string(String(repeating: "${K}", count: 1024)),
            "List": .array(Array(repeating: "${Big}", count: 20)),
        ]
        let inArrays = #expect(throws: EnvironmentError.self) { try Environment(values: elements) }
        #expect(inArrays?.code == .interpolationLimitExceeded)
        #expect(inArrays?.description.contains("whole configuration") == true)
    }
}
