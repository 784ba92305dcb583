import Environments
import Foundation
import Synchronization
import Testing

/// `Environment.shared` and `bootstrap`. Serialized: they set process-wide state.
@Suite(.serialized) struct SharedEnvironmentTests {
    @Test func bootstrapAgainReplacesTheConfigurationAndTellsObservers() throws {
        try withTemporaryDirectory { first in
            try withTemporaryDirectory { second in
                try first.writeXML(["Common": ["APIBaseUrl": "https://api.example.com"], "Debug": [:]])
                try second.writeXML(["Common": ["APIBaseUrl": "https://other.example.com"], "Debug": [:]])
                let environment = try Environment.bootstrap(first.options())
                #expect(environment.snapshot === Environment.shared.snapshot)
                #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://api.example.com")
                let generation = Environment.shared.generation
                let seen = Locked<[String]>([])
                let token = Environment.shared.onChange { change in seen.withLock { $0 += change.changedKeys } }
                defer { Environment.shared.removeObserver(token) }
                try Environment.bootstrap(second.options())
                #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://other.example.com")
                #expect(Environment.shared.generation == generation + 1)
                #expect(seen.withLock { $0 } == ["APIBaseUrl"])
            }
        }
    }

    @Test func bootstrapWithOptions() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["APIBaseUrl": "https://${Host}/v1"], "Debug": ["Host": "localhost"]])
            let environment = try Environment.bootstrap(directory.options())
            #expect(Environment.shared.snapshot === environment.snapshot)
            #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://localhost/v1")
            #expect(environment.lastError == nil)

            // A failing bootstrap leaves the shared environment as it was.
            try FileManager.default.removeItem(atPath: directory.mainFile)
            let error = #expect(throws: EnvironmentError.self) {
                try Environment.bootstrap(directory.options())
            }
            #expect(error?.code == .fileNotFound)
            #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://localhost/v1")
        }
    }
}
