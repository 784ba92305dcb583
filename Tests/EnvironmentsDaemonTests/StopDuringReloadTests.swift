import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import Locking
import Logging
import ServiceLifecycle
import TestSupport
import Testing

/// A service stops when asked, whatever a reload is doing; a `validate` that tries to change
/// the environment it judges is rejected, not left hanging.
@Suite("stopping during a reload", .timeLimit(.minutes(5)), .blocking)
struct StopDuringReloadTests {
    /// An environment on `fixture`'s files whose `validate` runs `judge` on every build after
    /// the first.
    private static func environment(
        _ fixture: ControlSocketFixture, judge: @escaping @Sendable (Environment) throws -> Void
    ) throws -> Environment {
        // Weakly: the environment holds this closure (its options); a strong reference would be
        // a cycle that outlives the test (LeakSanitizer reports it).
        let target = Locked(WeakEnvironment())
        var options = EnvironmentOptions(
            applicationName: "stop-tests", environment: "Production", configDirectory: fixture.root + "/etc",
            processEnvironment: ["CREDENTIALS_DIRECTORY": fixture.root + "/credentials"])
        options.validate = { _ in
            if let environment = target.withLock({ $0.environment }) { try judge(environment) }
        }
        let environment = try Environment(options: options)
        target.withLock { $0.environment = environment }
        return environment
    }

    @Test("graceful shutdown while validate blocks a reload: the service returns, the reload never applies")
    func stopWhileValidateBlocks() async throws {
        let fixture = try ControlSocketFixture()
        let blocking = Locked(false)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let environment = try Self.environment(fixture) { _ in
            guard blocking.withLock({ $0 }) else { return }
            entered.signal()
            _ = release.wait(timeout: .now() + 60)  // a validate that hangs (for a minute at most)
        }
        defer { release.signal() }
        let logger = Logger(label: "stop-tests")
        let service = EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: .inTest(controlSocket: nil), logger: logger)
        let group = ServiceGroup(services: [service], logger: logger)
        let running = Task { try await group.run() }
        await service.waitUntilReady()

        blocking.withLock { $0 = true }
        try fixture.write(ControlSocketFixture.plist("changed"))
        let reload = Task { await service.reloader.reload(trigger: .signal) }
        try await onThread { entered.wait() }  // the build is in validate, which hangs

        // What SIGTERM does to a ServiceGroup: a graceful shutdown. The service must return
        // while validate still hangs (60 s); 30 s is a bound for a stuck test, not a timing goal
        // (10 s was too short for a run starved at a load of 28).
        await group.triggerGracefulShutdown()
        let stopped = Locked(false)
        Task {
            _ = try? await running.value
            stopped.withLock { $0 = true }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while !stopped.withLock({ $0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(stopped.withLock { $0 }, "the service group returned while the reload's validate still hung")

        let record = await reload.value
        #expect(record.outcome == .abandoned)
        #expect(record.verdict == .rejected)
        #expect(record.abandonedReason.contains("stopping"))
        #expect((try? environment.require("Greeting", as: String.self)) == "hello")

        // The abandoned build ends now; it must not publish. A reload made after it (which waits
        // for it) finds the change still to apply.
        blocking.withLock { $0 = false }
        release.signal()
        let after = try await onThread { try environment.reload() }
        guard case .applied(let change) = after else {
            Issue.record("the abandoned reload was applied after the stop: \(after)")
            return
        }
        #expect(change.changedKeys.contains("Greeting"))
        #expect((try? environment.require("Greeting", as: String.self)) == "changed")
    }

    @Test("a validate that reloads its own environment is rejected with reentrantChange; the configuration stays")
    func validateThatReloadsIsRejected() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try Self.environment(fixture) { environment in try environment.reload() }
        let logger = Logger(label: "stop-tests")
        let service = EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: .inTest(controlSocket: nil), logger: logger)
        try await service.whileRunning {
            try fixture.write(ControlSocketFixture.plist("changed"))
            let record = await service.reloader.reload(trigger: .signal)
            #expect(record.outcome == .rejected)
            #expect(record.error?.code == .reentrantChange)
            #expect(record.error?.message.contains("validate must not call reload()") == true)
            #expect(record.generation == 1)
            #expect((try? environment.require("Greeting", as: String.self)) == "hello")
        }
    }
}

/// A weak reference to an environment, for a closure that the environment itself holds.
struct WeakEnvironment: Sendable {
    weak var environment: Environment?
}
