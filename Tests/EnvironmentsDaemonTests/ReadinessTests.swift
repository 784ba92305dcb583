import Environments
import EnvironmentsDaemon
import Foundation
import Logging
import ServiceLifecycle
import SystemdSupport
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// When `READY=1` goes out, read from a real notify socket: the service runs in a child
/// process of its own (an exit test), whose `NOTIFY_SOCKET` is the socket this test binds, so
/// that no other test's notifications mix with its own.
@Suite("readiness", .timeLimit(.minutes(5)), .blocking)
struct ReadinessTests {
    /// What the child sends just before the application says it serves: the datagrams before
    /// it came before the application served.
    static let marker = "X_TEST_APPLICATION=serving"

    @Test(
        "whenApplicationServes: no READY=1 before applicationIsServing(), READY=1 with STATUS= after; a reload before says nothing to systemd"
    )
    func readyWaitsForTheApplication() async throws {
        let (datagrams, marker, ready) = try await Self.start(waitingForApplication: true)
        #expect(marker < ready, "READY=1 came before the application served: \(datagrams)")
        #expect(datagrams.filter(Self.isReady).count == 1, "\(datagrams)")
        #expect(
            datagrams[ready].split(separator: "\n").contains(
                "STATUS=Environment Production, configuration generation 1"), "\(datagrams[ready])")
        // The reload while the application started: applied, but neither RELOADING=1 nor a
        // READY=1 of its own (systemd would take that READY=1 for the start's).
        #expect(!datagrams.contains { $0.contains("RELOADING=1") }, "\(datagrams)")
    }

    @Test("whenConfigured (the default): READY=1 once the files are watched, without the application's word")
    func readyWhenConfigured() async throws {
        let (datagrams, marker, ready) = try await Self.start(waitingForApplication: false)
        #expect(ready < marker, "\(datagrams)")
        // The start's READY=1, and one after the control reload. A busy machine may deliver a
        // late file event, whose reload can still be under way when the child exits: every
        // READY=1 after the first follows a RELOADING=1, but not every reload ends in one.
        let isReloading = { (datagram: String) in datagram.split(separator: "\n").contains("RELOADING=1") }
        let control = try #require(
            datagrams.firstIndex { isReloading($0) && $0.contains("(control)") }, "\(datagrams)")
        #expect(datagrams[(control + 1)...].contains(where: Self.isReady), "\(datagrams)")
        let readies = datagrams.filter(Self.isReady).count
        #expect(readies <= 1 + datagrams.filter(isReloading).count, "\(datagrams)")
    }

    @Test(
        "whenApplicationServes: a server that fails to bind ends the service group at once, and READY=1 never went out"
    )
    func bindFailureEndsTheService() async throws {
        let fixture = try ControlSocketFixture()
        let notify = try NotifySocket(path: fixture.root + "/run/notify.sock")
        let root = fixture.root
        // Exit status 3: the group did not end within 20 s (a wait for READY=1 held it); 4: it
        // ended without an error; 5: with another one.
        await #expect(processExitsWith: .success) { [root = root as String] in
            try await ReadinessTests.failToServe(root: root)
        }
        let datagrams = Self.everyDatagram(on: notify)
        #expect(!datagrams.contains(where: Self.isReady), "\(datagrams)")
    }

    /// An application whose server cannot bind: it throws before it serves.
    struct UnbindableServer: Service {
        struct AddressInUse: Error {}
        func run() async throws {
            try await Task.sleep(for: .milliseconds(200))
            throw AddressInUse()
        }
    }

    /// In the child: the service (with `SIGHUP` trapped, so that its signal task waits for
    /// readiness) and a server that fails, in one `ServiceGroup`, which must end with the
    /// server's error.
    static func failToServe(root: String) async throws {
        setenv("NOTIFY_SOCKET", root + "/run/notify.sock", 1)
        Thread.detachNewThread {
            sleep(20)
            exit(3)
        }
        let logger = Logger(label: "readiness-tests")
        let service = EnvironmentService(
            environment: try productionEnvironment(root: root), reloadSignals: await ReloadSignals.trap(),
            configuration: notifying(readiness: .whenApplicationServes), logger: logger)
        let group = ServiceGroup(services: [service, UnbindableServer()], logger: logger)
        do {
            try await group.run()
            exit(4)
        } catch {
            if !(error is UnbindableServer.AddressInUse) { exit(5) }
        }
    }

    static func isReady(_ datagram: String) -> Bool {
        datagram.split(separator: "\n").contains("READY=1")
    }

    /// The datagrams of a start (``datagrams(waitingForApplication:)``), with where the marker
    /// and the first `READY=1` are among them (both required).
    static func start(waitingForApplication: Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (datagrams: [String], marker: Int, ready: Int)
    {
        let datagrams = try await datagrams(waitingForApplication: waitingForApplication)
        let marker = try #require(
            datagrams.firstIndex(of: Self.marker), "\(datagrams)", sourceLocation: sourceLocation)
        let ready = try #require(
            datagrams.firstIndex(where: Self.isReady), "READY=1 never came: \(datagrams)",
            sourceLocation: sourceLocation)
        return (datagrams, marker, ready)
    }

    /// Every datagram `notify` holds, in order: those that came until none came for half a second.
    static func everyDatagram(on notify: NotifySocket) -> [String] {
        var datagrams: [String] = []
        while let datagram = notify.receive(timeout: .milliseconds(500)) { datagrams.append(datagram) }
        return datagrams
    }

    /// In the child: the environment `Production` of the files below `root` (`etc`, `credentials`).
    static func productionEnvironment(root: String) throws -> Environment {
        try Environment(
            options: EnvironmentOptions(
                applicationName: "readiness-tests", environment: "Production", configDirectory: root + "/etc",
                processEnvironment: ["CREDENTIALS_DIRECTORY": root + "/credentials"]))
    }

    /// In the child: a service that watches its files and sends systemd notifications to
    /// `NOTIFY_SOCKET`, ready as `readiness` says.
    static func notifying(readiness: EnvironmentService.Readiness) -> EnvironmentService.Configuration {
        var configuration = EnvironmentService.Configuration.inTest(controlSocket: nil, watchFiles: true)
        configuration.systemdNotifications = true
        configuration.readiness = readiness
        return configuration
    }

    /// Runs ``serve(root:waitingForApplication:)`` in a child process whose `NOTIFY_SOCKET` is
    /// a socket bound here, and returns every datagram it sent, in order.
    static func datagrams(waitingForApplication: Bool) async throws -> [String] {
        let fixture = try ControlSocketFixture()
        let notify = try NotifySocket(path: fixture.root + "/run/notify.sock")
        let root = fixture.root
        await #expect(processExitsWith: .success) {
            [root = root as String, waiting = waitingForApplication as Bool] in
            try await ReadinessTests.serve(root: root, waitingForApplication: waiting)
        }
        return everyDatagram(on: notify)
    }

    /// In the child: an `EnvironmentService` that watches its files, a reload while the
    /// application "starts", the marker, then `applicationIsServing()` and the wait for READY.
    static func serve(root: String, waitingForApplication: Bool) async throws {
        setenv("NOTIFY_SOCKET", root + "/run/notify.sock", 1)
        let service = EnvironmentService(
            environment: try productionEnvironment(root: root), reloadSignals: nil,
            configuration: notifying(readiness: waitingForApplication ? .whenApplicationServes : .whenConfigured),
            logger: Logger(label: "readiness-tests"))
        let running = Task { try await service.run() }
        await service.waitUntilWatching()
        await service.reloader.reload(trigger: .control)
        // Time for a READY=1 that should not go out, to go out.
        try await Task.sleep(for: .milliseconds(300))
        SystemdNotifier().send([("X_TEST_APPLICATION", "serving")])
        await service.applicationIsServing()
        await service.waitUntilReady()
        running.cancel()
    }
}
