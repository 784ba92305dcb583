import Environments
import Foundation
import Testing

/// A value built through `${...}` from a restart-only key that waits for a restart waits with
/// it: the running configuration interpolates the running value, and the pending restarts list
/// the new one. The restart-only keys that hold until a restart are the running program's:
/// a key removed from `RestartRequired` still waits; one added waits at once.
@Suite struct RestartOnlyDerivedTests {
    private func write(
        _ directory: TemporaryDirectory, port: Int, restartRequired: [String] = ["ListenPort"],
        extra: [String: Any] = [:]
    ) throws {
        var common: [String: Any] = [
            "ListenPort": port, "PublicURL": "http://localhost:${ListenPort}/", "Name": "app",
        ]
        common.merge(extra) { _, new in new }
        try directory.writeXML(["Common": common, "RestartRequired": restartRequired, "Debug": [:]])
    }

    @Test("a string built from a waiting key keeps the running value, and is listed as pending")
    func derivedString() throws {
        try withTemporaryDirectory { directory in
            try write(directory, port: 8080)
            let environment = try Environment(options: directory.options())
            try write(directory, port: 9090, extra: ["Name": "renamed"])
            let outcome = try environment.reload()
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied, got \(outcome)")
                return
            }
            #expect(change.changedKeys == ["Name"])
            #expect(environment.get("ListenPort", default: 0) == 8080)
            #expect((try? environment.require("PublicURL", as: String.self)) == "http://localhost:8080/")
            #expect((try? environment.require("Name", as: String.self)) == "renamed")
            let pending = environment.snapshot.pendingRestart
            #expect(Set(pending.keys) == ["ListenPort", "PublicURL"])
            #expect(pending["PublicURL"]?.value == .string("http://localhost:9090/"))
            #expect(pending["PublicURL"]?.source.section == "Common")

            // The template itself may change live; the port in it still waits.
            try write(directory, port: 9090, extra: ["PublicURL": "https://localhost:${ListenPort}/v2"])
            try environment.reload()
            #expect((try? environment.require("PublicURL", as: String.self)) == "https://localhost:8080/v2")
            #expect(environment.snapshot.pendingRestart["PublicURL"]?.value == .string("https://localhost:9090/v2"))

            // The old port back: nothing waits.
            try write(directory, port: 8080)
            try environment.reload()
            #expect(environment.snapshot.pendingRestart.isEmpty)
            #expect((try? environment.require("PublicURL", as: String.self)) == "http://localhost:8080/")

            // check() shows the same as a reload would apply.
            try write(directory, port: 7070)
            let checked = try environment.check()
            #expect((try? checked.require("PublicURL", as: String.self)) == "http://localhost:8080/")
            #expect(Set(checked.pendingRestart.keys) == ["ListenPort", "PublicURL"])
        }
    }

    @Test("a chain of keys: every link built from the waiting key waits; others do not")
    func transitiveChain() throws {
        try withTemporaryDirectory { directory in
            let chain: [String: Any] = [
                "Origin": "http://localhost:${ListenPort}", "API": "${Origin}/api", "Health": "${API}/health",
                "Links": ["${Health}", "static"], "Unrelated": "${Name}-x", "Literal": "$${ListenPort}",
            ]
            try write(directory, port: 8080, extra: chain)
            let environment = try Environment(options: directory.options())
            try write(directory, port: 9090, extra: chain.merging(["Name": "other"]) { _, new in new })
            try environment.reload()
            #expect((try? environment.require("Health", as: String.self)) == "http://localhost:8080/api/health")
            #expect(
                environment.snapshot.value(forKey: "Links") == .array(["http://localhost:8080/api/health", "static"]))
            #expect((try? environment.require("Unrelated", as: String.self)) == "other-x")
            #expect((try? environment.require("Literal", as: String.self)) == "${ListenPort}")
            let pending = environment.snapshot.pendingRestart
            #expect(Set(pending.keys) == ["ListenPort", "PublicURL", "Origin", "API", "Health", "Links"])
            #expect(pending["Health"]?.value == .string("http://localhost:9090/api/health"))
            #expect(pending["Links"]?.value == .array(["http://localhost:9090/api/health", "static"]))
        }
    }

    @Test("a copy of a waiting secret waits too, and stays redacted")
    func derivedSecret() throws {
        try withTemporaryDirectory { directory in
            func write(token: String) throws {
                try directory.writeXML([
                    "Common": [
                        "Auth": ["Token": token], "TokenCopy": "${Auth.Token}", "Header": "Bearer ${TokenCopy}",
                    ],
                    "Secrets": ["Auth"], "RestartRequired": ["Auth.Token"], "Debug": [:],
                ])
            }
            try write(token: "old-secret")
            let environment = try Environment(options: directory.options())
            try write(token: "new-secret")
            try environment.reload()
            #expect((try? environment.require("TokenCopy", as: String.self)) == "old-secret")
            #expect((try? environment.require("Header", as: String.self)) == "Bearer old-secret")
            let snapshot = environment.snapshot
            #expect(Set(snapshot.pendingRestart.keys) == ["Auth.Token", "TokenCopy", "Header"])
            for key in ["Auth.Token", "TokenCopy", "Header"] {
                #expect(snapshot.pendingRestart[key]?.isSecret == true, "\(key)")
                #expect(snapshot.configuredValue(forKey: key)?.isSecret == true, "\(key)")
                #expect(snapshot.configuredValue(forKey: key)?.displayValue() == "<redacted>", "\(key)")
            }
            #expect(snapshot.pendingRestart["Header"]?.value == .string("Bearer new-secret"))
        }
    }

    @Test("removing a key from RestartRequired, in the same edit or a later one, waits for a restart")
    func removalWaitsForRestart() throws {
        try withTemporaryDirectory { directory in
            try write(directory, port: 8080)
            let environment = try Environment(options: directory.options())
            // The same edit.
            try write(directory, port: 9090, restartRequired: [])
            try environment.reload()
            #expect(environment.get("ListenPort", default: 0) == 8080)
            #expect((try? environment.require("PublicURL", as: String.self)) == "http://localhost:8080/")
            #expect(environment.snapshot.restartRequiredKeys.contains("ListenPort"))
            #expect(Set(environment.snapshot.pendingRestart.keys) == ["ListenPort", "PublicURL"])
            // And every reload after it.
            try write(directory, port: 9091, restartRequired: [], extra: ["Name": "n2"])
            try environment.reload()
            #expect(environment.get("ListenPort", default: 0) == 8080)
            #expect((try? environment.require("Name", as: String.self)) == "n2")
            #expect(environment.snapshot.pendingRestart["ListenPort"]?.value == .integer(9091))

            // A later edit.
            try withTemporaryDirectory { other in
                try write(other, port: 8080)
                let running = try Environment(options: other.options())
                try write(other, port: 8080, restartRequired: [])
                try running.reload()
                #expect(running.snapshot.restartRequiredKeys.contains("ListenPort"))
                try write(other, port: 9090, restartRequired: [])
                try running.reload()
                #expect(running.get("ListenPort", default: 0) == 8080)
                #expect((try? running.require("PublicURL", as: String.self)) == "http://localhost:8080/")
                #expect(running.snapshot.pendingRestart["PublicURL"]?.value == .string("http://localhost:9090/"))
            }

            // A restart takes the new set and the new values.
            let restarted = try Environment(options: directory.options())
            #expect(restarted.get("ListenPort", default: 0) == 9091)
            #expect(!restarted.snapshot.restartRequiredKeys.contains("ListenPort"))
        }
    }

    @Test("a key added to RestartRequired holds from the reload that adds it, and after")
    func addedKeyHolds() throws {
        try withTemporaryDirectory { directory in
            try write(directory, port: 8080, extra: ["Workers": 4, "Pool": "${Workers} workers"])
            let environment = try Environment(options: directory.options())
            try write(
                directory, port: 8080, restartRequired: ["ListenPort", "Workers"],
                extra: ["Workers": 8, "Pool": "${Workers} workers"])
            try environment.reload()
            #expect(environment.get("Workers", default: 0) == 4)
            #expect((try? environment.require("Pool", as: String.self)) == "4 workers")
            #expect(environment.snapshot.restartRequiredKeys == ["ListenPort", "Workers"])
            #expect(Set(environment.snapshot.pendingRestart.keys) == ["Workers", "Pool"])
            // Taken out again: it still holds.
            try write(directory, port: 8080, extra: ["Workers": 16, "Pool": "${Workers} workers"])
            try environment.reload()
            #expect(environment.get("Workers", default: 0) == 4)
            #expect(environment.snapshot.pendingRestart["Pool"]?.value == .string("16 workers"))
        }
    }

    @Test("running values that cannot be interpolated: the reload is rejected, saying why")
    func heldValueThatCannotBeUsed() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Name": "app"], "RestartRequired": ["ListenPort"], "Debug": [:]])
            let environment = try Environment(options: directory.options())
            // A new restart-only key, and a key that uses it: the running program has none.
            try write(directory, port: 9090)
            let error = try #require(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error.code == .unresolvedReference)
            #expect(error.message.contains("restart-only keys that changed (ListenPort) at their running values"))
            #expect(error.hint?.contains("Restart") == true)
            #expect((try? environment.require("PublicURL", as: String.self)) == nil)
            #expect(environment.generation == 1)
        }
    }

    @Test("an override of a restart-only key holds the keys built from it")
    func override() throws {
        try withTemporaryDirectory { directory in
            try write(directory, port: 8080)
            let environment = try Environment(options: directory.options())
            try environment.setOverride(9999, forKey: "ListenPort")
            #expect((try? environment.require("PublicURL", as: String.self)) == "http://localhost:8080/")
            #expect(environment.snapshot.pendingRestart["PublicURL"]?.value == .string("http://localhost:9999/"))
        }
    }
}
