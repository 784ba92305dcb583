import Environments
import Foundation
import Testing

/// `decode(_:from:)`: a section into a `Decodable` type.
@Suite struct DecodingTests {
    struct Service: Decodable, Equatable {
        struct Database: Decodable, Equatable {
            var host: String
            var port: Int
            var useTLS: Bool
            var password: String?

            enum CodingKeys: String, CodingKey {
                case host = "Host", port = "Port", useTLS = "UseTLS", password = "Password"
            }
        }

        struct Endpoint: Decodable, Equatable {
            var name: String
            var url: URL
            var weight: Double?

            enum CodingKeys: String, CodingKey { case name = "Name", url = "URL", weight = "Weight" }
        }

        var name: String
        var workers: Int
        var timeout: Duration
        var database: Database
        var endpoints: [Endpoint]
        var tags: [String]
        var limits: [String: Int]
        var comment: String?

        enum CodingKeys: String, CodingKey {
            case name = "Name", workers = "Workers", timeout = "Timeout", database = "Database"
            case endpoints = "Endpoints", tags = "Tags", limits = "Limits", comment = "Comment"
        }
    }

    private let file: [String: Any] = [
        "Common": [
            "Service": [
                "Name": "billing",
                "Workers": "4",
                "Timeout": "1.5s",
                "Database": ["Host": "localhost", "Port": 5432, "UseTLS": "yes"],
                "Endpoints": [
                    ["Name": "primary", "URL": "https://a.example.com", "Weight": 0.75],
                    ["Name": "fallback", "URL": "https://b.example.com"],
                ],
                "Tags": ["eu", "billing"],
                "Limits": ["Read": 10, "Write": "20"],
            ]
        ],
        "Debug": ["Service": ["Database": ["Host": "db.debug", "Port": "6543"], "Workers": 2]],
    ]

    @Test func decodesALayeredSection() throws {
        try withEnvironment(loading: file) { environment, _ in
            let service = try environment.decode(Service.self, from: "Service")
            #expect(
                service
                    == Service(
                        name: "billing", workers: 2, timeout: .milliseconds(1500),
                        database: .init(host: "db.debug", port: 6543, useTLS: true, password: nil),
                        endpoints: [
                            .init(name: "primary", url: URL(string: "https://a.example.com")!, weight: 0.75),
                            .init(name: "fallback", url: URL(string: "https://b.example.com")!, weight: nil),
                        ],
                        tags: ["eu", "billing"], limits: ["Read": 10, "Write": 20], comment: nil))
        }
    }

    @Test func decodesANestedSectionByDottedPath() throws {
        try withEnvironment(loading: file) { environment, _ in
            let database = try environment.decode(Service.Database.self, from: "Service.Database")
            #expect(database == .init(host: "db.debug", port: 6543, useTLS: true, password: nil))
        }
    }

    @Test func optionalFieldsArePresentWhenSet() throws {
        try withEnvironment(loading: file) { environment, _ in
            try environment.setOverride("hunter2", forKey: "Service.Database.Password")
            try environment.setOverride("hello", forKey: "Service.Comment")
            let service = try environment.decode(Service.self, from: "Service")
            #expect(service.database.password == "hunter2")
            #expect(service.comment == "hello")
        }
    }

    @Test func decodesTheWholeConfiguration() throws {
        struct Root: Decodable {
            var Service: Service
        }
        try withEnvironment(loading: file) { environment, _ in
            let root = try environment.decode(Root.self)
            #expect(root.Service.name == "billing")
            #expect(root.Service.workers == 2)
        }
    }

    @Test func decodesFromASnapshotAndInMemory() throws {
        struct Pair: Decodable, Equatable {
            var a: Int
            var b: [Bool]
        }
        let environment = try Environment(values: ["Pair.a": "12", "Pair.b": ["true", 0, "off"]])
        #expect(try environment.decode(Pair.self, from: "Pair") == Pair(a: 12, b: [true, false, false]))
        #expect(try environment.snapshot.decode(Pair.self, from: "Pair") == Pair(a: 12, b: [true, false, false]))
    }

    struct NeedsOwner: Decodable { var Owner: String }

    /// A section or a field that no layer sets.
    struct Missing: CustomTestStringConvertible, Sendable {
        let testDescription: String
        /// The full path the error must name.
        let key: String
        let decode: @Sendable (Environment) throws -> Void
    }

    static let missing = [
        Missing(testDescription: "a section", key: "Billing") { _ = try $0.decode(Service.self, from: "Billing") },
        Missing(testDescription: "a field", key: "Service.Database.Owner") {
            _ = try $0.decode(NeedsOwner.self, from: "Service.Database")
        },
    ]

    @Test(arguments: missing)
    func aMissingKeyIsNamedByItsFullPath(_ missing: Missing) throws {
        try withEnvironment(loading: file) { environment, directory in
            let error = try #require(throws: EnvironmentError.self) { try missing.decode(environment) }
            #expect(error.code == .missingKey)
            #expect(error.key == missing.key)
            #expect(error.environment == "Debug")
            #expect(error.searchedFiles == [directory.mainFile])
            #expect(error.description.contains("'\(missing.key)'"))
        }
    }

    @Test func typeMismatchNamesPathTypesAndSource() throws {
        try withTemporaryDirectory { directory in
            var broken = file
            broken["Debug"] = ["Service": ["Database": ["Port": "lots"]]]
            try directory.writeXML(broken)
            let environment = try Environment(options: directory.options())
            let thrown = try #require(throws: EnvironmentError.self) {
                try environment.decode(Service.self, from: "Service")
            }
            #expect(thrown.code == .decodingFailed)
            #expect(thrown.key == "Service.Database.Port")
            #expect(thrown.environment == "Debug")
            #expect(thrown.file == directory.mainFile)
            let text = thrown.description
            #expect(text.contains("'Service.Database.Port' is a string"))
            #expect(text.contains("expected integer"))
            #expect(text.contains("\(directory.mainFile) [Debug]"))
        }
    }

    @Test func typeMismatchInAnArrayNamesTheIndex() throws {
        try withEnvironment(loading: file) { environment, _ in
            try environment.setOverride(
                .array([["Name": "ok", "URL": "https://a.example.com"], ["Name": "bad", "URL": "not a url"]]),
                forKey: "Service.Endpoints")
            let error = #expect(throws: EnvironmentError.self) {
                try environment.decode(Service.self, from: "Service")
            }
            #expect(error?.code == .decodingFailed)
            #expect(error?.key == "Service.Endpoints[1].URL")
            #expect(error?.description.contains("expected URL") == true)
        }
    }

    @Test(arguments: ["Service.Name", "Service.Endpoints"])
    func aScalarOrAnArrayIsNotASection(path: String) throws {
        try withEnvironment(loading: file) { environment, _ in
            let error = #expect(throws: EnvironmentError.self) {
                try environment.decode(Service.Database.self, from: path)
            }
            #expect(error?.code == .decodingFailed)
            #expect(error?.description.contains("expected dictionary") == true)
        }
    }

    @Test func decodingErrorsNameTheEnvironment() throws {
        try withEnvironment(loading: file) { environment, _ in
            try environment.setOverride("lots", forKey: "Service.Database.Port")
            let error = #expect(throws: EnvironmentError.self) {
                try environment.decode(Service.Database.self, from: "Service.Database")
            }
            #expect(error?.environment == "Debug")
        }
    }
}
