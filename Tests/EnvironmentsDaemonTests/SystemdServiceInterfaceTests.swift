import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import JSONText
import Logging
import SystemdSupport
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's `io.systemd.service` on the control socket of an `EnvironmentService` running in
/// this process: `Ping`, `Reload`, `SetLogLevel` and `GetEnvironment`, over a real unix socket.
/// (The end-to-end suite calls them with `varlinkctl` under systemd 257.)
@Suite("io.systemd.service", .serialized, .timeLimit(.minutes(10)), .blocking)
struct SystemdServiceInterfaceTests {
    static func plist(logLevel: String, greeting: String = "hello") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
        <key>Common</key><dict>
          <key>LogLevel</key><string>\(logLevel)</string>
          <key>Greeting</key><string>\(greeting)</string>
        </dict>
        <key>Production</key><dict/>
        </dict></plist>
        """
    }

    private func service(_ fixture: ControlSocketFixture, _ environment: Environment, control: LogLevelControl)
        -> EnvironmentService
    {
        var configuration = EnvironmentService.Configuration.inTest(controlSocket: fixture.socket)
        configuration.levelControl = control
        return EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: configuration,
            logger: Logger(label: "systemd-service-tests"))
    }

    /// Runs `body` while a service with `LogLevel` info (and a control at info) answers on a
    /// fixture's socket.
    private func whileServing(
        _ body: @Sendable (ControlSocketFixture, Environment, LogLevelControl) async throws -> Void
    ) async throws {
        let fixture = try ControlSocketFixture()
        try fixture.write(Self.plist(logLevel: "info"))
        let environment = try fixture.environment()
        let control = LogLevelControl(level: .info)
        try await service(fixture, environment, control: control).whileRunning {
            try await body(fixture, environment, control)
        }
    }

    private func call(_ fixture: ControlSocketFixture, _ method: String, _ parameters: [String: JSONValue] = [:])
        async throws -> VarlinkReply
    {
        try await ControlSocketFixture.call(fixture.socket, "io.systemd.service." + method, parameters)
    }

    private func describe(_ fixture: ControlSocketFixture) async throws -> DescribeReply {
        try await JSONValue.record(
            DescribeReply.self,
            from: ControlSocketFixture.call(fixture.socket, .describe).parameters)
    }

    @Test("Ping answers; the interface is listed and introspects")
    func ping() async throws {
        try await whileServing { fixture, environment, control in
            let pong = try await call(fixture, "Ping")
            #expect(pong.error == nil)
            #expect(pong.parameters == [:])
            let extra = try await call(fixture, "Ping", ["x": .int(1)])
            #expect(extra.error == "org.varlink.service.InvalidParameter")
            let unknown = try await call(fixture, "Frobnicate")
            #expect(unknown.error == "org.varlink.service.MethodNotFound")

            let info = try await ControlSocketFixture.call(fixture.socket, "org.varlink.service.GetInfo")
            #expect(info.parameters?["interfaces"]?.arrayValue?.contains(.string("io.systemd.service")) == true)
            let description = try await ControlSocketFixture.call(
                fixture.socket, "org.varlink.service.GetInterfaceDescription",
                ["interface": .string("io.systemd.service")])
            let text = try #require(description.parameters?["description"]?.stringValue)
            #expect(text.contains("interface io.systemd.service"))
            #expect(text.contains("method SetLogLevel("))
        }
    }

    @Test("SetLogLevel overrides LogLevel until it is removed; reloads keep it; envctl show says so")
    func setLogLevel() async throws {
        try await whileServing { fixture, environment, control in
            #expect(control.level == .info)
            #expect(try await describe(fixture).logLevelOverride == nil)

            let set = try await call(fixture, "SetLogLevel", ["level": .int(7)])
            #expect(set.error == nil, "\(set)")
            #expect(control.level == .debug)
            let override = try #require(try await describe(fixture).logLevelOverride)
            #expect(override.level == "debug")
            #expect(override.syslogLevel == 7)
            #expect(override.key == "LogLevel")
            #expect(override.uid == Int(geteuid()))

            let shown = try runToEnd(BuiltProducts.envctl, ["show", "--socket", fixture.socket])
            #expect(shown.status == 0, "\(shown.output)")
            #expect(shown.output.contains("# log level debug (syslog 7) set by io.systemd.service.SetLogLevel"))
            #expect(shown.output.contains("it overrides LogLevel until the daemon restarts"))
            #expect(shown.output.contains("(overridden: debug, by io.systemd.service.SetLogLevel until restart)"))
            let json = try runToEnd(BuiltProducts.envctl, ["show", "--json", "--socket", fixture.socket])
            #expect(json.output.contains(#""logLevelOverride""#), "\(json.output)")

            // A reload through io.systemd.service applies the files, and the override stays.
            try fixture.write(Self.plist(logLevel: "warning", greeting: "edited"))
            let reload = try await call(fixture, "Reload")
            #expect(reload.error == nil, "\(reload)")
            #expect((try? environment.require("Greeting", as: String.self)) == "edited")
            #expect(control.level == .debug)

            // Syslog levels 0-2 are critical, 3 error.
            _ = try await call(fixture, "SetLogLevel", ["level": .int(3)])
            #expect(control.level == .error)
            _ = try await call(fixture, "SetLogLevel", ["level": .int(0)])
            #expect(control.level == .critical)

            // A null level removes the override: LogLevel applies again.
            let removed = try await call(fixture, "SetLogLevel", ["level": .null])
            #expect(removed.error == nil)
            #expect(control.level == .warning)
            #expect(try await describe(fixture).logLevelOverride == nil)

            for bad: JSONValue in [.int(8), .int(-1), .string("debug"), .double(6.5)] {
                let rejected = try await call(fixture, "SetLogLevel", ["level": bad])
                #expect(rejected.error == "org.varlink.service.InvalidParameter", "\(bad)")
                #expect(rejected.parameters?["parameter"] == .string("level"))
            }
            #expect(control.level == .warning)
        }
    }

    @Test("a rejected Reload is an error with the verdict; the daemon keeps its configuration")
    func rejectedReload() async throws {
        try await whileServing { fixture, environment, control in
            try fixture.write("<plist><dict>")
            let reload = try await call(fixture, "Reload")
            #expect(reload.error == ControlInterface.Error.reloadRejected.qualifiedName)
            #expect(reload.parameters?["verdict"]?.objectValue?["outcome"] == .string("rejected"))
            #expect((try? environment.require("Greeting", as: String.self)) == "hello")
            #expect(environment.generation == 1)
        }
    }

    @Test("GetEnvironment lists the process environment, to root and the daemon's user")
    func getEnvironment() async throws {
        try await whileServing { fixture, environment, control in
            let reply = try await call(fixture, "GetEnvironment")
            let variables = try #require(reply.parameters?["environment"]?.arrayValue).compactMap(\.stringValue)
            let path = try #require(ProcessInfo.processInfo.environment["PATH"])
            #expect(variables.contains("PATH=" + path))
            #expect(variables == variables.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
    }

    @Test(
        "another user may Ping, but not Reload, SetLogLevel or GetEnvironment", .enabled(if: getuid() == 0),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func permissions() async throws {
        try await whileServing { fixture, environment, control in
            // One varlink call as uid 65534, by a client that is not ours.
            let client = """
                import json, socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                s.sendall(json.dumps({"method": sys.argv[2], "parameters": json.loads(sys.argv[3])}).encode() + b"\\0")
                reply = b""
                while not reply.endswith(b"\\0"):
                    chunk = s.recv(65536)
                    if not chunk: break
                    reply += chunk
                print(reply.rstrip(b"\\0").decode())
                """
            func asNobody(_ method: String, _ parameters: String = "{}") async throws -> String {
                try await onThread {
                    try runToEnd(
                        "/usr/bin/setpriv",
                        [
                            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", client,
                            fixture.socket, "io.systemd.service." + method, parameters,
                        ]
                    ).output
                }
            }
            let pong = try await asNobody("Ping")
            #expect(pong.contains(#""parameters""#) && !pong.contains(#""error""#), "\(pong)")
            for (method, parameters) in [("Reload", "{}"), ("SetLogLevel", #"{"level":7}"#), ("GetEnvironment", "{}")] {
                let reply = try await asNobody(method, parameters)
                #expect(reply.contains(#""error":"org.varlink.service.PermissionDenied""#), "\(method): \(reply)")
                #expect(!reply.contains("PATH="), "\(method): \(reply)")
            }
            #expect(control.level == .info)
            #expect(environment.generation == 1)
        }
    }
}
