import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import JSONText
import Logging
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's history of loads and reloads: its limits, the control socket's `History`, and
/// `envctl history` and `envctl diff --generation` reading it from a service in this process.
/// (The end-to-end suite reads the journal's entries under systemd.)
@Suite("reload history", .serialized, .timeLimit(.minutes(10)), .blocking)
struct ReloadHistoryTests {
    static func record(_ generation: UInt64, changes: [SettingChangeRecord] = []) -> ReloadReport {
        ReloadReport(
            outcome: .applied, trigger: "signal", generation: generation, environment: "Production",
            changedKeys: changes.map(\.key),
            previousValues: Dictionary(changes.map { ($0.key, $0.previous!) }) { first, _ in first },
            values: Dictionary(changes.map { ($0.key, $0.value!) }) { first, _ in first }, finished: Date())
    }

    @Test("at most 100 entries, about 768 KiB in all, the newest always kept; dropped ones counted")
    func limits() {
        var history = ReloadHistory()
        for generation: UInt64 in 1...150 { history.append(Self.record(generation)) }
        #expect(history.entries.count == ReloadHistory.maximumEntries)
        #expect(history.entries.first?.generation == 51)
        #expect(history.entries.last?.generation == 150)
        #expect(history.dropped == 50)

        // Entries of about 100 KiB each: the total bound drops the oldest.
        let big = (0..<1000).map {
            SettingChangeRecord(key: "Key\($0)", previous: String(repeating: "a", count: 30), value: "b")
        }
        for generation: UInt64 in 151...170 { history.append(Self.record(generation, changes: big)) }
        let text = try? JSONEncoder().encode(HistoryReply(entries: history.entries, limit: 100, dropped: 0))
        #expect((text?.count ?? .max) <= ReloadHistory.maximumBytes + (64 << 10))
        #expect(history.entries.last?.generation == 170)
        #expect(history.entries.count < 20)
        #expect(history.dropped == 170 - history.entries.count)

        // One entry larger than everything still stays: the newest is always there.
        let huge = (0..<50_000).map { SettingChangeRecord(key: "K\($0)", previous: "x", value: "y") }
        history.append(Self.record(171, changes: huge))
        #expect(history.entries.map(\.generation) == [171])
    }

    @Test("a reload that changes more than an entry keeps: the keys without values, then as many keys as fit")
    func largeChange() throws {
        let directory = "/tmp/history-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func environment(value: String, count: Int) throws -> EnvironmentSnapshot {
            let keys = (0..<count).map { "<key>Key\($0)</key><string>\(value)</string>" }.joined()
            try "<plist><dict><key>Common</key><dict>\(keys)</dict><key>Production</key><dict/></dict></plist>"
                .write(toFile: directory + "/Environments.plist", atomically: true, encoding: .utf8)
            return try Environment(
                options: EnvironmentOptions(
                    applicationName: "history", environment: "Production", configDirectory: directory)
            ).snapshot
        }
        let before = try environment(value: String(repeating: "a", count: 100), count: 2000)
        let after = try environment(value: String(repeating: "b", count: 100), count: 2000)
        func report(_ keys: [String]) -> ReloadReport {
            ReloadReport(
                .applied, configuration: after, cause: ReloadCause(trigger: .file), startedMonotonicMicroseconds: 0,
                change: EnvironmentChange(previous: before, current: after, changedKeys: keys))
        }
        func entry(_ keys: [String]) -> ReloadReport? {
            var history = ReloadHistory()
            history.append(report(keys))
            return history.entries.first
        }
        let all = try #require(entry(before.leafKeys))
        #expect(all.valuesOmitted)
        #expect(all.changedKeyCount == 2000)
        #expect(all.settingChanges.count == 2000)
        #expect(all.settingChanges.allSatisfy { $0.previous == nil && $0.value == nil })

        let small = try #require(entry(["Key1", "Key0"]))
        #expect(!small.valuesOmitted)
        #expect(small.settingChanges.map(\.key) == ["Key0", "Key1"])
        #expect(small.settingChanges[0].previous == String(repeating: "a", count: 100))

        let many = (0..<20_000).map { "SomeRatherLongKeyName.\($0)" }
        let truncated = try #require(entry(many))
        #expect(truncated.valuesOmitted)
        #expect(truncated.changedKeyCount == many.count)
        #expect(truncated.settingChanges.count < many.count)
        #expect(truncated.settingChanges.count > 1000)
    }

    /// Runs `body` while a service answers on a fixture's socket, reloaded through the socket
    /// twice (one applied, one rejected) after its start.
    private func whileServing(
        _ body: @Sendable (ControlSocketFixture) async throws -> Void
    ) async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        try await fixture.service(environment).whileRunning {
            try fixture.write(ControlSocketFixture.plist("bonjour"))
            let applied = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(applied.error == nil)
            try fixture.write("<plist><dict>\n<key>Common</key>\n<strin>x</string>")
            let rejected = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(rejected.error == ControlInterface.Error.reloadRejected.qualifiedName)
            try await body(fixture)
        }
    }

    @Test("History over the socket: start, applied with values before and after (secrets redacted), rejected with why")
    func overTheSocket() async throws {
        try await whileServing { fixture in
            let reply = try await ControlSocketFixture.call(fixture.socket, .history)
            let history = try JSONValue.record(HistoryReply.self, from: reply.parameters)
            #expect(history.limit == 100)
            #expect(history.entries.map(\.outcome) == [.loaded, .applied, .rejected])
            #expect(history.entries.map(\.generation) == [1, 2, 2])
            #expect(history.entries[0].trigger == "start")
            #expect(history.entries[1].trigger == "control")
            #expect(history.entries[1].callerUID == getuid())
            #expect(
                history.entries[1].settingChanges == [
                    SettingChangeRecord(key: "Greeting", previous: "hello", value: "bonjour")
                ])
            #expect(history.entries[2].error?.code == .malformedFile)
            #expect(history.entries[2].error?.file == fixture.mainFile)
            let text = String(describing: reply.parameters)
            #expect(!text.contains("hunter2"))

            let extra = try await ControlSocketFixture.call(
                fixture.socket, .history, ["x": .int(1)])
            #expect(extra.error == "org.varlink.service.InvalidParameter")
        }
    }

    @Test(
        "a change made before the files are watched is caught up: the history, Describe's last reload and the state file tell the same reload"
    )
    func catchUpIsOneRecord() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        // Between the first load and the start of watching: the service catches it up.
        try fixture.write(ControlSocketFixture.plist("meanwhile"))
        var configuration = EnvironmentService.Configuration.inTest(controlSocket: fixture.socket, watchFiles: true)
        let stateFile = fixture.root + "/run/state.json"
        configuration.stateFile = stateFile
        let service = EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: configuration,
            logger: Logger(label: "history-tests"))
        try await service.whileRunning {
            #expect((try? environment.require("Greeting", as: String.self)) == "meanwhile")
            let history = try await JSONValue.record(
                HistoryReply.self,
                from: ControlSocketFixture.call(fixture.socket, .history).parameters)
            // One record of the catch-up: the history keeps applied reloads, so a second one
            // (a catch-up announced twice) would show here.
            #expect(history.entries.map(\.outcome) == [.loaded, .applied])
            #expect(history.entries.map(\.trigger) == ["start", "file"])
            #expect(history.entries.last?.settingChanges.map(\.key) == ["Greeting"])
            let describe = try await JSONValue.record(
                DescribeReply.self,
                from: ControlSocketFixture.call(fixture.socket, .describe).parameters)
            let state = try ReloadState.read(from: stateFile)
            #expect(state.generation == 2)
            let last = try #require(describe.lastReload)
            let written = try #require(state.lastReload)
            // Describe and the state file tell the same last reload: the catch-up, or (seen once
            // under CI's load) a file event after it that found nothing new, which the history
            // leaves out.
            #expect(last.trigger == "file" && written.trigger == "file")
            #expect(last.generation == 2 && written.generation == 2)
            #expect(last.outcome == written.outcome)
            #expect(last.changedKeys == written.changedKeys)
            if last.outcome == .applied {
                #expect(last.changedKeys == ["Greeting"])
            } else {
                #expect(last.outcome == .unchanged && last.changedKeys.isEmpty)
            }
        }
    }

    @Test("envctl history lists the daemon's entries; --json; diff --generation rebuilds a past generation")
    func envctl() async throws {
        try await whileServing { fixture in
            let history = try runToEnd(
                BuiltProducts.envctl, ["history", "--socket", fixture.socket, "--from", "daemon"],
                environment: operatorEnvironment(), separately: true)
            #expect(history.status == 0, "\(history.output)")
            let lines = history.standardOutput.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("# from the running daemon, pid \(getpid())") == true, "\(lines)")
            #expect(
                lines.contains { $0.contains("generation 1  loaded at start, pid \(getpid()), environment Production") }
            )
            #expect(
                lines.contains {
                    $0.contains("generation 2  applied  control from uid \(getuid()): 1 key changed")
                })
            #expect(lines.contains("    Greeting: hello -> bonjour"))
            #expect(lines.contains { $0.contains("generation 2  rejected  control from uid \(getuid())") })
            #expect(lines.contains { $0.hasPrefix("    ") && $0.contains(fixture.mainFile + ":3: ") }, "\(lines)")
            #expect(!history.output.contains("hunter2"))

            let automatic = try runToEnd(
                BuiltProducts.envctl, ["history", "--socket", fixture.socket, "-n", "1"],
                environment: operatorEnvironment(), separately: true)
            #expect(automatic.status == 0, "\(automatic.output)")
            #expect(automatic.standardOutput.contains("# from the running daemon"))
            // The test runs in some unit's control group, or in none.
            #expect(
                automatic.standardOutput.contains("no configuration entries of")
                    || automatic.standardOutput.contains("no journal to read: the daemon runs in no systemd service"))
            #expect(automatic.standardOutput.contains("rejected"))
            #expect(!automatic.standardOutput.contains("loaded at start"))

            let json = try runToEnd(
                BuiltProducts.envctl, ["history", "--socket", fixture.socket, "--from", "daemon", "--json"],
                environment: operatorEnvironment(), separately: true)
            #expect(json.status == 0, "\(json.output)")
            struct Output: Decodable {
                var readFrom: String
                var entries: [[String: JSONValue]]
            }
            let output = try JSONDecoder().decode(Output.self, from: Data(json.standardOutput.utf8))
            #expect(try output.entries.map { try ReloadReport(historyEntry: $0).generation } == [1, 2, 2])

            let diff = try runToEnd(
                BuiltProducts.envctl, ["diff", "--generation", "1", "--socket", fixture.socket],
                environment: operatorEnvironment(), separately: true)
            #expect(diff.status == 1, "\(diff.output)")
            #expect(diff.standardOutput.contains("--- generation 1 (rebuilt from the running daemon's history)"))
            #expect(diff.standardOutput.contains("- Greeting = hello"))
            #expect(diff.standardOutput.contains("+ Greeting = bonjour"))
            #expect(!diff.standardOutput.contains("ListenPort"))
            #expect(!diff.output.contains("hunter2"))

            let same = try runToEnd(
                BuiltProducts.envctl, ["diff", "--generation", "2", "--socket", fixture.socket],
                environment: operatorEnvironment(), separately: true)
            #expect(same.status == 0, "\(same.output)")
            #expect(same.standardOutput.contains("# no differences"))

            let future = try runToEnd(
                BuiltProducts.envctl, ["diff", "--generation", "9", "--socket", fixture.socket],
                environment: operatorEnvironment(), separately: true)
            #expect(future.status == 2)
            #expect(future.standardError.contains("there is no generation 9 yet"))

            let secrets = try runToEnd(
                BuiltProducts.envctl, ["diff", "--generation", "1", "--show-secrets", "--socket", fixture.socket],
                environment: operatorEnvironment(), separately: true)
            #expect(secrets.status != 0)
            #expect(secrets.standardError.contains("keeps no secret value"))
        }
    }
}
