import Environments
import Foundation
import Locking
import Testing

/// `Environment.shared` and its once-only `bootstrap`. One test, in a child process: a process
/// has one shared environment, and one successful bootstrap.
@Suite(.serialized) struct SharedEnvironmentTests {
    @Test func bootstrapSucceedsOnceAndAFailedOneLeavesNoTrace() async throws {
        // In a process of its own (an exit test): other suites (the Vapor integration's
        // BootstrapTests) bootstrap the test process's shared environment too.
        await #expect(processExitsWith: .success) {
            try await withTemporaryDirectory { first in
                try await withTemporaryDirectory { second in
                    // A failing bootstrap leaves the shared environment unbootstrapped.
                    let missing = #expect(throws: EnvironmentError.self) {
                        try Environment.bootstrap(first.options())
                    }
                    #expect(missing?.code == .fileNotFound)

                    // The application's validate may read the shared environment it is loading:
                    // it sees the configuration in place (none yet), instead of waiting for itself.
                    try first.writeXML(["Common": ["APIBaseUrl": "https://${Host}/v1"], "Debug": ["Host": "localhost"]])
                    var options = first.options()
                    let seenByValidate = Locked<[String?]>([])
                    options.validate = { snapshot in
                        seenByValidate.withLock {
                            $0.append((try? Environment.shared.require("APIBaseUrl", as: String.self)))
                            $0.append(Environment.shared.options?.configDirectory)
                            $0.append((try? snapshot.require("APIBaseUrl", as: String.self)))
                        }
                    }
                    let environment = try Environment.bootstrap(options)
                    #expect(environment === Environment.shared)
                    #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://localhost/v1")
                    #expect(Environment.shared.lastError == nil)
                    #expect(Environment.shared.options?.configDirectory == first.path)
                    #expect(seenByValidate.value == [nil, nil, "https://localhost/v1"])

                    // Once only: a second bootstrap is an error, and changes nothing.
                    let generation = Environment.shared.generation
                    let stream = Environment.shared.changes()
                    try second.writeXML(["Common": ["APIBaseUrl": "https://other.example.com"], "Debug": [:]])
                    let again = #expect(throws: EnvironmentError.self) {
                        try Environment.bootstrap(second.options())
                    }
                    #expect(again?.code == .alreadyBootstrapped)
                    #expect(again?.hint?.contains("reload()") == true)
                    #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://localhost/v1")
                    #expect(Environment.shared.generation == generation)

                    // The bootstrapped files are what reloads read.
                    try first.writeXML(["Common": ["APIBaseUrl": "https://${Host}/v2"], "Debug": ["Host": "localhost"]])
                    try Environment.shared.reload()
                    #expect(Environment.shared.fetch("APIBaseUrl") as? String == "https://localhost/v2")
                    var changes = stream.makeAsyncIterator()
                    let change = try #require(await changes.next())
                    #expect(change.changedKeys == ["APIBaseUrl"])
                    #expect(change.current.generation == generation + 1)
                }
            }
        }
    }
}
