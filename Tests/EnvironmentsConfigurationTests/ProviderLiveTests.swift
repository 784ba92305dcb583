#if SwiftConfiguration
    import Configuration
    import Environments
    import EnvironmentsConfiguration
    import EnvironmentsDaemon
    import Foundation
    import Locking
    import Logging
    import Synchronization
    import TestSupport
    import Testing

    /// Watches through a `ConfigReader` while the environment changes for real: files edited
    /// under a running `EnvironmentService` (inotify), the reload a `SIGHUP` runs, runtime
    /// overrides, and rejected files. Real `SIGHUP`s and `systemctl reload` are covered by the
    /// Hummingbird scenario of the end-to-end suite (a signal here would reach every suite of the
    /// test process).
    @Suite("EnvironmentProvider: live", .timeLimit(.minutes(10)))
    struct ProviderLiveTests {
        static func plist(_ greeting: String, port: Int = 8080) -> [String: Any] {
            ["Common": ["Greeting": greeting, "HTTP": ["port": port]], "Production": [String: Any]()]
        }

        static func service(for environment: Environment, watchFiles: Bool) -> EnvironmentService {
            let configuration = EnvironmentService.Configuration.inTest(controlSocket: nil, watchFiles: watchFiles)
            return EnvironmentService(
                environment: environment, reloadSignals: nil, configuration: configuration,
                logger: Logger(label: "provider-tests"))
        }

        /// Runs `body` while an environment read from a fresh directory (its file: ``plist(_:port:)``
        /// with `hello`) has its service running, watching the files or not.
        static func withRunningService(
            watchFiles: Bool,
            _ body: @Sendable (ConfigurationDirectory, Environment, EnvironmentService) async throws -> Void
        ) async throws {
            try await withConfigurationDirectory { directory in
                try directory.write(Self.plist("hello"))
                let environment = try Environment(options: directory.options())
                let service = Self.service(for: environment, watchFiles: watchFiles)
                try await service.whileRunning { try await body(directory, environment, service) }
            }
        }

        /// Watches `Greeting` through a `ConfigReader` on `environment`: expects the file's `hello`
        /// first, then runs `body` with the watch's next value, one a call.
        static func watchGreeting(
            _ environment: Environment, _ body: (_ next: () async throws -> String??) async throws -> Void
        ) async throws {
            let reader = ConfigReader(provider: EnvironmentProvider(environment: environment))
            try await reader.watchString(forKey: "Greeting") { updates in
                var values = updates.makeAsyncIterator()
                #expect(try await values.next() == "hello")
                try await body { try await values.next() }
            }
        }

        @Test("a saved file reaches watchString, and a scoped watchInt, through the file watcher")
        func fileChange() async throws {
            try await Self.withRunningService(watchFiles: true) { directory, environment, _ in
                try await Self.watchGreeting(environment) { next in
                    try directory.write(Self.plist("edited"))
                    #expect(try await next() == "edited")
                }
                let reader = ConfigReader(provider: EnvironmentProvider(environment: environment))
                try await reader.scoped(to: "HTTP").watchInt(forKey: "port") { updates in
                    var values = updates.makeAsyncIterator()
                    #expect(try await values.next() == 8080)
                    try directory.write(Self.plist("edited", port: 9090))
                    #expect(try await values.next() == 9090)
                }
            }
        }

        @Test("the reload SIGHUP runs, and runtime overrides, reach watchers; unrelated changes do not")
        func reloadAndOverride() async throws {
            try await Self.withRunningService(watchFiles: false) { directory, environment, service in
                try await Self.watchGreeting(environment) { next in
                    // Another key changes first: the watcher of Greeting hears nothing of it.
                    try environment.setOverride(1, forKey: "HTTP.port")
                    try directory.write(Self.plist("reloaded"))
                    #expect(reloadApplies(environment) == true)
                    #expect(try await next() == "reloaded")
                    try environment.setOverride("overridden", forKey: "Greeting")
                    #expect(try await next() == "overridden")
                    try environment.setOverride(nil, forKey: "Greeting")
                    #expect(try await next() == "reloaded")
                }
            }
        }

        @Test("a rejected file delivers nothing and the old values stay; the next good one is delivered")
        func rejected() async throws {
            let seen = Seen()
            try await Self.withRunningService(watchFiles: false) { directory, environment, service in
                let provider = EnvironmentProvider(environment: environment)
                try await provider.watchSnapshot { updates in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await snapshot in updates {
                                let value = try snapshot.value(forKey: AbsoluteConfigKey(["Greeting"]), type: .string)
                                let generation = (snapshot as! EnvironmentProvider.Snapshot).environmentSnapshot
                                    .generation
                                seen.values.withLock {
                                    $0.append("\(generation):\(value.value?.content ?? .string("-"))")
                                }
                                if generation == 2 { return }
                            }
                        }
                        while seen.values.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
                        try directory.write(Data("<plist><dict><key>Common</key>".utf8), to: "Environments.plist")
                        #expect(reloadApplies(environment) == nil)
                        #expect(
                            try provider.value(forKey: AbsoluteConfigKey(["Greeting"]), type: .string).value?.content
                                == .string("hello"))
                        try directory.write(Self.plist("fixed"))
                        #expect(reloadApplies(environment) == true)
                        try await group.waitForAll()
                    }
                }
            }
            #expect(seen.values.withLock { $0 } == ["1:string(\"hello\")", "2:string(\"fixed\")"])
        }

        @Test("watching ends cleanly when the handler returns, and the environment keeps no watcher")
        func ends() async throws {
            let environment = try Environment(values: ["Greeting": "hello"])
            let reader = ConfigReader(provider: EnvironmentProvider(environment: environment))
            for _ in 0..<100 {
                let first = try await reader.watchString(forKey: "Greeting") { updates in
                    var values = updates.makeAsyncIterator()
                    return try await values.next() ?? nil
                }
                #expect(first == "hello")
            }
            // A change after every watcher has gone reaches no one and fails nothing.
            try environment.setOverride("bye", forKey: "Greeting")
            #expect(reader.string(forKey: "Greeting") == "bye")
        }
    }

    /// What a watcher was given, shared between the watching task and the test.
    final class Seen: Sendable {
        let values = Locked<[String]>([])
    }

    /// Reloads `environment` as `SIGHUP` would, through the public API: `true` when the new
    /// configuration was applied, `false` when nothing changed, `nil` when it was rejected.
    private func reloadApplies(_ environment: Environment) -> Bool? {
        do {
            if case .applied = try environment.reload() { return true }
            return false
        } catch {
            return nil
        }
    }
#endif
