import Environments
import Foundation
import Locking
import Testing

/// Immutable snapshots, generations, reloads that apply, change nothing or fail, validation,
/// restart-only keys and in-memory environments.
@Suite struct SnapshotReloadTests {
    @Test func firstLoadIsGenerationOne() throws {
        try withEnvironment(loading: ["Debug": ["A": 1]]) { environment, directory in
            #expect(environment.generation == 1)
            #expect(environment.snapshot.generation == 1)
            #expect(environment.snapshot.generation == 1)
            #expect(environment.snapshot.pendingRestart.isEmpty)
            #expect(environment.lastError == nil)
            #expect(environment.options?.configDirectory == directory.path)
        }
    }

    @Test func reloadAppliesAnEditedFile() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["Keep": "k"], "Debug": ["A": 1, "B": "old", "Gone": true]])
            let environment = try Environment(options: directory.options())
            try directory.writeXML(["Common": ["Keep": "k"], "Debug": ["A": 2, "B": "old", "New": "n"]])
            let outcome = try environment.reload()
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied, got \(outcome)")
                return
            }
            #expect(change.changedKeys == ["A", "Gone", "New"])
            #expect(change.previous.generation == 1)
            #expect(change.current.generation == 2)
            #expect(outcome.snapshot.generation == 2)
            #expect(change.previous.get("A", default: 0) == 1)
            #expect(change.current.get("A", default: 0) == 2)
            #expect(environment.generation == 2)
            #expect(environment.get("A", default: 0) == 2)
            #expect(environment.fetch("Gone") == nil)
            #expect((try? environment.require("New", as: String.self)) == "n")
            #expect(environment.snapshot === change.current)
        }
    }

    @Test func reloadPicksUpANewDropIn() throws {
        try withEnvironment(loading: ["Debug": ["A": 1]]) { environment, directory in
            let dropIn = try directory.writeXML(["Debug": ["A": 5]], to: "Environments.plist.d/10.plist")
            let outcome = try environment.reload()
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied")
                return
            }
            #expect(change.changedKeys == ["A"])
            #expect(environment.snapshot.files == [directory.mainFile, dropIn])
        }
    }

    @Test func reloadWithoutChangeIsUnchanged() throws {
        try withEnvironment(loading: ["Debug": ["A": 1]]) { environment, directory in
            let received = Received()
            let observation = environment.onChange(received.record)
            defer { observation.cancel() }
            let before = environment.snapshot
            // Rewriting the same content is not a change either.
            try directory.writeXML(["Debug": ["A": 1]])
            let outcome = try environment.reload()
            guard case .unchanged(let snapshot) = outcome else {
                Issue.record("expected .unchanged, got \(outcome)")
                return
            }
            #expect(snapshot === before)
            #expect(environment.snapshot === before)
            #expect(environment.generation == 1)
            // Observers run one after another: the next change's call comes after any other.
            try environment.setOverride("probe", forKey: "Probe")
            received.wait(for: 1)
            #expect(received.keys == [["Probe"]])
        }
    }

    @Test func aBrokenFileKeepsTheOldSnapshot() throws {
        try withEnvironment(loading: ["Debug": ["A": 1, "B": "b"]]) { environment, directory in
            try directory.writeXML(["Debug": ["A": 2]])
            try environment.reload()
            let good = environment.snapshot
            let received = Received()
            let observation = environment.onChange(received.record)
            defer { observation.cancel() }

            try directory.write("Environments.plist", text: "<plist><dict><key>Debug</key><dict>")
            let error = #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error?.code == .malformedFile)
            #expect(error?.file == directory.mainFile)
            #expect(environment.snapshot === good)
            #expect(environment.generation == 2)
            #expect(environment.get("A", default: 0) == 2)
            #expect(environment.fetch("B") == nil)

            // Fixing the file applies again, as the next generation.
            try directory.writeXML(["Debug": ["A": 3]])
            try environment.reload()
            #expect(environment.generation == 3)
            #expect(environment.get("A", default: 0) == 3)
            // One call, for the fix: observers run in order, so none for the broken file is due.
            received.wait(for: 1)
            #expect(received.changes.value.map(\.current.generation) == [3])
        }
    }

    @Test func aDeletedFileKeepsTheOldSnapshot() throws {
        try withEnvironment(loading: ["Debug": ["A": 1]]) { environment, directory in
            try FileManager.default.removeItem(atPath: directory.mainFile)
            let error = #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error?.code == .fileNotFound)
            #expect(environment.get("A", default: 0) == 1)
            #expect(environment.generation == 1)
        }
    }

    @Test func anInterpolationErrorOnReloadKeepsTheOldSnapshot() throws {
        try withEnvironment(loading: ["Debug": ["A": "a"]]) { environment, directory in
            try directory.writeXML(["Debug": ["A": "${B}", "B": "${A}"]])
            let error = #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error?.code == .interpolationCycle)
            #expect((try? environment.require("A", as: String.self)) == "a")
            #expect(environment.generation == 1)
        }
    }

    struct Rejected: Error, CustomStringConvertible {
        var description: String { "Port must be below 65536" }
    }

    @Test func validationRejectsTheFirstLoad() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Port": 70000]])
            let options = directory.options(validate: { snapshot in
                if snapshot.get("Port", default: 0) > 65535 { throw Rejected() }
            })
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(error?.code == .validationFailed)
            #expect(error?.environment == "Debug")
            #expect(error?.searchedFiles == [directory.mainFile])
            #expect(error?.description.contains("Port must be below 65536") == true)
        }
    }

    @Test func validationRejectingAReloadKeepsTheOldSnapshot() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Port": 8080, "Name": "a"]])
            let seen = Locked<[UInt64]>([])
            let options = directory.options(validate: { snapshot in
                seen.withLock { $0.append(snapshot.generation) }
                if snapshot.get("Port", default: 0) > 65535 { throw Rejected() }
            })
            let environment = try Environment(options: options)
            try directory.writeXML(["Debug": ["Port": 70000, "Name": "b"]])
            let error = #expect(throws: EnvironmentError.self) { try environment.reload() }
            #expect(error?.code == .validationFailed)
            #expect(environment.get("Port", default: 0) == 8080)
            #expect((try? environment.require("Name", as: String.self)) == "a")
            #expect(environment.generation == 1)
            #expect(seen.value == [1, 2])
            // Overrides are validated too.
            let override = #expect(throws: EnvironmentError.self) {
                try environment.setOverride(99999, forKey: "Port")
            }
            #expect(override?.code == .validationFailed)
            #expect(environment.get("Port", default: 0) == 8080)
        }
    }

    @Test func validationThrowingAnEnvironmentErrorKeepsItsCode() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Name": "a"]])
            let options = directory.options(validate: { snapshot in
                _ = try snapshot.require("Port", as: Int.self)
            })
            let error = #expect(throws: EnvironmentError.self) { try Environment(options: options) }
            #expect(error?.code == .missingKey)
            #expect(error?.key == "Port")
        }
    }

    @Test func checkBuildsWithoutApplying() throws {
        try withEnvironment(loading: ["Debug": ["A": 1]]) { environment, directory in
            try directory.writeXML(["Debug": ["A": 2]])
            let checked = try environment.check()
            #expect(checked.get("A", default: 0) == 2)
            #expect(checked.generation == 2)
            #expect(environment.get("A", default: 0) == 1)
            #expect(environment.generation == 1)
            try directory.write("Environments.plist", text: "garbage")
            #expect(throws: EnvironmentError.self) { try environment.check() }
            #expect(environment.get("A", default: 0) == 1)
        }
    }

    @Test func aHeldSnapshotIsUnaffectedByReloads() throws {
        try withEnvironment(loading: ["Debug": ["A": 1, "Nested": ["B": "x"]]]) { environment, directory in
            let held = environment.snapshot
            try directory.writeXML(["Debug": ["A": 2, "Nested": ["B": "y"], "C": true]])
            try environment.reload()
            try environment.setOverride("z", forKey: "Nested.B")
            #expect(held.generation == 1)
            #expect(held.get("A", default: 0) == 1)
            #expect((try? held.require("Nested.B", as: String.self)) == "x")
            #expect(held.fetch("C") == nil)
            #expect(held.leafKeys == ["A", "Nested.B"])
            #expect(held.values == ["A": 1, "Nested": ["B": "x"]])
            #expect(environment.generation == 3)
            #expect((try? environment.require("Nested.B", as: String.self)) == "z")
        }
    }

    @Test func snapshotContents() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Common": ["A": 1], "Debug": ["B": ["C": "c"], "Empty": [:] as [String: Any]]])
            let snapshot = try Environment(options: directory.options()).snapshot
            #expect(snapshot.environmentName == "Debug")
            #expect(snapshot.leafKeys == ["A", "B.C", "Empty"])
            #expect(snapshot.configuredValue(forKey: "B")?.value == ["C": "c"])
            #expect(snapshot.values == ["A": 1, "B": ["C": "c"], "Empty": [:]])
            #expect(snapshot.location?.mainFile == directory.mainFile)
            #expect(snapshot.snapshot === snapshot)
            #expect(snapshot.hasSameContent(as: snapshot))
            #expect(snapshot.changedKeys(since: snapshot).isEmpty)
        }
    }

    // MARK: - Restart-only keys

    @Test func restartRequiredKeysKeepTheirOldValue() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "RestartRequired": ["ListenPort", "Database"],
                "Debug": ["ListenPort": 8080, "LogLevel": "info", "Database": ["Host": "a", "Port": 1]],
            ])
            let environment = try Environment(options: directory.options())
            #expect(environment.snapshot.restartRequiredKeys == ["ListenPort", "Database"])
            try directory.writeXML([
                "RestartRequired": ["ListenPort", "Database"],
                "Debug": ["ListenPort": 9090, "LogLevel": "debug", "Database": ["Host": "b", "Port": 1]],
            ])
            let outcome = try environment.reload()
            guard case .applied(let change) = outcome else {
                Issue.record("expected .applied")
                return
            }
            #expect(change.changedKeys == ["LogLevel"])
            #expect((try? environment.require("LogLevel", as: String.self)) == "debug")
            #expect(environment.get("ListenPort", default: 0) == 8080)
            #expect((try? environment.require("Database.Host", as: String.self)) == "a")
            let pending = environment.snapshot.pendingRestart
            #expect(Set(pending.keys) == ["ListenPort", "Database"])
            #expect(pending["ListenPort"]?.value == .integer(9090))
            #expect(pending["ListenPort"]?.source.section == "Debug")
            #expect(pending["Database"]?.value == .dictionary(["Host": "b", "Port": 1]))

            // Reloading the same file again changes nothing.
            let again = try environment.reload()
            guard case .unchanged = again else {
                Issue.record("expected .unchanged, got \(again)")
                return
            }

            // Putting the old value back clears the pending restart.
            try directory.writeXML([
                "RestartRequired": ["ListenPort", "Database"],
                "Debug": ["ListenPort": 8080, "LogLevel": "debug", "Database": ["Host": "a", "Port": 1]],
            ])
            try environment.reload()
            #expect(environment.snapshot.pendingRestart.isEmpty)
            #expect(environment.get("ListenPort", default: 0) == 8080)

            // A new environment (a restart) takes the new value.
            try directory.writeXML([
                "RestartRequired": ["ListenPort"], "Debug": ["ListenPort": 9090],
            ])
            let restarted = try Environment(options: directory.options())
            #expect(restarted.get("ListenPort", default: 0) == 9090)
            #expect(restarted.snapshot.pendingRestart.isEmpty)
        }
    }

    @Test func restartRequiredKeysFromOptionsAndOverrides() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Workers": 4, "Other": 1]])
            let environment = try Environment(options: directory.options(restartRequiredKeys: ["Workers"]))
            try environment.setOverride(8, forKey: "Workers")
            #expect(environment.get("Workers", default: 0) == 4)
            #expect(environment.snapshot.pendingRestart["Workers"]?.value == .integer(8))
            #expect(environment.snapshot.pendingRestart["Workers"]?.source == .override)
        }
    }

    @Test func restartRequiredKeyAddedOrRemoved() throws {
        try withEnvironment(loading: ["RestartRequired": ["Port"], "Debug": ["Other": 1]]) { environment, directory in
            try directory.writeXML(["RestartRequired": ["Port"], "Debug": ["Other": 1, "Port": 80]])
            try environment.reload()
            #expect(environment.fetch("Port") == nil)
            #expect(environment.snapshot.pendingRestart["Port"]?.value == .integer(80))

            let other = try Environment(options: directory.options())
            try directory.writeXML(["RestartRequired": ["Port"], "Debug": ["Other": 1]])
            try other.reload()
            #expect(other.get("Port", default: 0) == 80)
            #expect(other.snapshot.pendingRestart.keys.sorted() == ["Port"])
        }
    }

    @Test func restartRequiredInADropIn() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML(["Debug": ["Port": 80]])
            try directory.writeXML(["RestartRequired": ["Port"]], to: "Environments.plist.d/10.plist")
            let environment = try Environment(options: directory.options())
            try directory.writeXML(["Debug": ["Port": 81]])
            try environment.reload()
            #expect(environment.get("Port", default: 0) == 80)
            #expect(environment.snapshot.pendingRestart["Port"]?.value == .integer(81))
        }
    }

    // MARK: - In memory

    @Test func inMemoryValues() throws {
        let environment = try Environment(values: ["A": 1, "B.C": "c"], environmentName: "Unit")
        #expect(environment.environmentName == "Unit")
        #expect(environment.generation == 1)
        #expect(environment.get("A", default: 0) == 1)
        #expect((try? environment.require("B.C", as: String.self)) == "c")
        let outcome = try environment.reload()
        guard case .unchanged = outcome else {
            Issue.record("expected .unchanged")
            return
        }
        try environment.setOverride(2, forKey: "A")
        #expect(environment.get("A", default: 0) == 2)
        #expect(environment.generation == 2)
        #expect(try environment.check().get("A", default: 0) == 2)
    }

    @Test func inMemoryEnvironmentsSelectAndLayer() throws {
        let environments: [String: SettingValue] = [
            "Common": ["Host": "localhost", "URL": "https://${Host}/api", "Port": 80],
            "Staging": ["Host": "staging.example.com"],
            "Production": ["Host": "example.com", "Port": 443],
        ]
        let staging = try Environment(
            environments: environments, options: EnvironmentOptions(environment: "Staging", processEnvironment: [:]))
        #expect(staging.environmentName == "Staging")
        #expect((try? staging.require("URL", as: String.self)) == "https://staging.example.com/api")
        #expect(staging.get("Port", default: 0) == 80)
        #expect(staging.snapshot.files.isEmpty)
        #expect(staging.snapshot.location == nil)
        // A missing key names no file: nothing was searched on disk.
        let missing = #expect(throws: EnvironmentError.self) { try staging.require("Nope", as: String.self) }
        #expect(missing?.code == .missingKey)
        #expect(missing?.searchedFiles == [])
        #expect(missing?.environment == "Staging")

        let production = try Environment(
            environments: environments,
            options: EnvironmentOptions(processEnvironment: ["APP_ENVIRONMENT": "Production"]))
        #expect(production.get("Port", default: 0) == 443)

        let error = #expect(throws: EnvironmentError.self) {
            try Environment(
                environments: environments, options: EnvironmentOptions(environment: "Debug", processEnvironment: [:]))
        }
        #expect(error?.code == .unknownEnvironment)
        #expect(error?.description.contains("known environments: Production, Staging") == true)
    }

    @Test func inMemoryEnvironmentsWithBadSections() {
        let error = #expect(throws: EnvironmentError.self) {
            try Environment(
                environments: ["Common": "oops", "Debug": [:]],
                options: EnvironmentOptions(environment: "Debug", processEnvironment: [:]))
        }
        #expect(error?.code == .invalidSection)
        #expect(error?.key == "Common")
    }

    // MARK: - Concurrency

    @Test func concurrentReadersAlwaysSeeConsistentSnapshots() async throws {
        try await withTemporaryDirectory { directory in
            func write(_ value: Int) throws {
                try directory.writeXML([
                    "Common": ["Left": value, "Right": value],
                    "Debug": ["Pair": ["Left": "v\(value)", "Right": "v\(value)"]],
                ])
            }
            try write(0)
            let environment = try Environment(options: directory.options())
            let reloads = 60
            let done = Locked(false)

            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var reads = 0
                        var lastGeneration: UInt64 = 0
                        while !done.value || reads == 0 {
                            let snapshot = environment.snapshot
                            let left = snapshot.get("Left", default: -1)
                            let right = snapshot.get("Right", default: -2)
                            #expect(left == right)
                            #expect((0...reloads).contains(left))
                            #expect((try? snapshot.require("Pair.Left", as: String.self)) == "v\(left)")
                            #expect((try? snapshot.require("Pair.Right", as: String.self)) == "v\(left)")
                            #expect(Int(snapshot.generation) == left + 1)
                            #expect(snapshot.generation >= lastGeneration)
                            lastGeneration = snapshot.generation
                            // Reads straight from the environment are each from one valid snapshot.
                            let single = environment.get("Left", default: -1)
                            #expect((0...reloads).contains(single))
                            reads += 1
                            await Task.yield()
                        }
                        return reads
                    }
                }
                group.addTask {
                    for value in 1...reloads {
                        try write(value)
                        let outcome = try environment.reload()
                        #expect(outcome.snapshot.generation == UInt64(value) + 1)
                        await Task.yield()
                    }
                    done.withLock { $0 = true }
                    return 0
                }
                var total = 0
                for try await reads in group { total += reads }
                #expect(total > 0)
            }
            #expect(environment.generation == UInt64(reloads) + 1)
            #expect(environment.get("Left", default: 0) == reloads)
        }
    }

    @Test func concurrentReloadsAndOverridesEachApplyOnce() async throws {
        let environment = try Environment(values: ["Counter": 0])
        await withTaskGroup(of: Void.self) { group in
            for index in 1...20 {
                group.addTask { _ = try? environment.setOverride(.integer(index), forKey: "Key\(index)") }
            }
        }
        #expect(environment.generation == 21)
        for index in 1...20 {
            #expect(environment.get("Key\(index)", default: 0) == index)
        }
    }
}
