import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import Locking
import TestSupport
import Testing
import Varlink

/// The daemon's builds of the configuration (files, credentials, the application's `validate`)
/// block, so they run where blocking is allowed: never on the few threads of Swift's
/// cooperative pool, which all of the program's async code shares.
@Suite("builds run off the cooperative pool", .timeLimit(.minutes(5)), .blocking)
struct BuildsOffThePoolTests {
    @Test("validate runs in no Swift task: for a Check call, a Reload call and a reload on a signal")
    func validateRunsOutsideTasks() async throws {
        let fixture = try ControlSocketFixture()
        // For each build: whether its validate ran inside a task (on the pool, or on an actor).
        let inTask = Locked<[Bool]>([])
        var options = EnvironmentOptions(
            applicationName: "pool-tests", environment: "Production", configDirectory: fixture.root + "/etc",
            processEnvironment: ["CREDENTIALS_DIRECTORY": fixture.root + "/credentials"])
        options.validate = { _ in
            let current = withUnsafeCurrentTask { $0 != nil }
            inTask.withLock { $0.append(current) }
        }
        let environment = try Environment(options: options)
        inTask.withLock { $0 = [] }  // the first load is this test's own, in its task
        let service = fixture.service(environment)
        try await service.whileRunning {
            try fixture.write(ControlSocketFixture.plist("changed"))
            let check = try await ControlSocketFixture.call(fixture.socket, .check)
            #expect(check.error == nil, "\(check)")
            let reload = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(reload.error == nil, "\(reload)")
            try fixture.write(ControlSocketFixture.plist("again"))
            #expect(await service.reloader.reload(trigger: .signal).outcome == .applied)
        }
        let builds = inTask.withLock { $0 }
        #expect(builds.count == 3)
        #expect(!builds.contains(true), "validate ran inside a task: \(builds)")
    }
}
