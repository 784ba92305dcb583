import Environments
import Foundation
import Testing

/// `Environment.shared` and `bootstrap`. Serialized: they set process-wide state.
@Suite(.serialized) struct SharedEnvironmentTests {
    @Test func bootstrapWithAnEnvironment() {
        let environment = Environment(values: ["APIBaseUrl": "https://api.example.com"])
        Environment.bootstrap(environment)
        #expect(Environment.shared === environment)
        #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://api.example.com")
        let replacement = Environment(values: ["APIBaseUrl": "https://other.example.com"])
        Environment.bootstrap(replacement)
        #expect(Environment.shared === replacement)
        #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://other.example.com")
    }

    @Test func bootstrapWithOptions() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["APIBaseUrl": "https://${Host}/v1"], "Debug": ["Host": "localhost"]])
            let environment = try Environment.bootstrap(directory.options())
            #expect(Environment.shared === environment)
            #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://localhost/v1")
            #expect(environment.lastError == nil)

            // A failing bootstrap leaves the shared environment as it was.
            try FileManager.default.removeItem(atPath: directory.mainFile)
            let error = #expect(throws: EnvironmentError.self) {
                try Environment.bootstrap(directory.options())
            }
            #expect(error?.code == .fileNotFound)
            #expect(Environment.shared === environment)
        }
    }
}
