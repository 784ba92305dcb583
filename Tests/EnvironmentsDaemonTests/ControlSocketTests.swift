import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import JSONText
import Synchronization
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// The control socket of an `EnvironmentService` running in this process, asked over a real
/// unix socket: by `VarlinkClient`, by raw bytes, and by `envctl` run as another user.
@Suite("control socket", .serialized, .timeLimit(.minutes(10)), .blocking)
struct ControlSocketTests {
    @Test("Describe, Get, Check and Reload answer from the running daemon; org.varlink.service introspects")
    func methods() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        try await fixture.service(environment).whileRunning {
            let info = try await ControlSocketFixture.call(fixture.socket, "org.varlink.service.GetInfo")
            #expect(
                info.parameters?["interfaces"]
                    == .array([
                        .string("org.varlink.service"), .string(ControlInterface.name), .string("io.systemd.service"),
                    ]))
            let interface = try await ControlSocketFixture.call(
                fixture.socket, "org.varlink.service.GetInterfaceDescription",
                ["interface": .string(ControlInterface.name)])
            #expect(interface.parameters?["description"]?.stringValue == ControlInterface.description)

            let described = try await JSONValue.record(
                DescribeReply.self,
                from: ControlSocketFixture.call(fixture.socket, .describe).parameters)
            #expect(described.environment == "Production")
            #expect(described.generation == 1)
            #expect(described.files == [fixture.mainFile])
            let password = try #require(described.settings.first { $0.key == "Database.Password" })
            #expect(password.secret && password.value == nil)
            #expect(described.settings.first { $0.key == "Greeting" }?.value == "hello")
            #expect(described.settings.first { $0.key == "Greeting" }?.source.section == "Common")

            let secret = try await ControlSocketFixture.call(
                fixture.socket, .get,
                ["key": .string("Database.Password"), "showSecrets": .bool(true)])
            #expect(secret.parameters?["setting"]?.objectValue?["value"] == .string("hunter2"))
            let missing = try await ControlSocketFixture.call(
                fixture.socket, .get, ["key": .string("Nope")])
            #expect(missing.error == ControlInterface.Error.noSuchSetting.qualifiedName)

            // Check builds what is on disk without applying it.
            try fixture.write(ControlSocketFixture.plist("checked"))
            let check = try await JSONValue.record(
                CheckReply.self,
                from: ControlSocketFixture.call(fixture.socket, .check).parameters)
            #expect(check.changedKeys == ["Greeting"])
            #expect((try? environment.require("Greeting", as: String.self)) == "hello")

            // Reload applies it and answers with the verdict.
            let reload = try await ControlSocketFixture.call(fixture.socket, .reload)
            let verdict = try ReloadReport(verdict: try #require(reload.parameters?["verdict"]?.objectValue))
            #expect(verdict.outcome == .applied)
            #expect(verdict.changedKeys == ["Greeting"])
            #expect(verdict.generation == 2)
            #expect(verdict.trigger == "control")
            #expect((try? environment.require("Greeting", as: String.self)) == "checked")

            // A rejected reload is an error with the verdict, and Describe then reports it.
            try fixture.write("<plist><dict><key>Common</key>\n<dict>\n<strin>oops</string></dict></dict></plist>")
            let rejected = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(rejected.error == ControlInterface.Error.reloadRejected.qualifiedName)
            let error = rejected.parameters?["verdict"]?.objectValue?["error"]?.objectValue
            #expect(error?["file"] == .string(fixture.mainFile))
            #expect(error?["line"] == .int(3))
            #expect(error?["code"] == .string("malformedFile"))
            let checkBad = try await ControlSocketFixture.call(fixture.socket, .check)
            #expect(checkBad.error == ControlInterface.Error.configurationRejected.qualifiedName)
            let after = try await JSONValue.record(
                DescribeReply.self,
                from: ControlSocketFixture.call(fixture.socket, .describe).parameters)
            #expect(after.generation == 2)
            #expect(after.lastReload?.outcome == .rejected)
            #expect(after.lastReload?.error?.line == 3)
            #expect(after.settings.first { $0.key == "Greeting" }?.value == "checked")

            let unknown = try await ControlSocketFixture.call(fixture.socket, "\(ControlInterface.name).Explode")
            #expect(unknown.error == "org.varlink.service.MethodNotFound")
            let otherInterface = try await ControlSocketFixture.call(fixture.socket, "com.example.Thing.Do")
            #expect(otherInterface.error == "org.varlink.service.InterfaceNotFound")
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.socket), "the socket is removed on a clean stop")
    }

    @Test(
        "another user may describe (secrets redacted) but not reload, check or see secrets", .enabled(if: getuid() == 0)
    )
    func permissions() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        try await fixture.service(environment).whileRunning {
            func asNobody(_ arguments: [String]) async throws -> (status: Int32, output: String) {
                try await onThread { try asNobodyBlocking(arguments) }
            }
            @Sendable func asNobodyBlocking(_ arguments: [String]) throws -> (status: Int32, output: String) {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments =
                    ["--reuid=65534", "--regid=65534", "--clear-groups", BuiltProducts.envctl]
                    + arguments + ["--socket", fixture.socket]
                let pipe = Pipe()
                process.standardOutput = pipe
                process.standardError = pipe
                try process.run()
                let data = readToEnd(pipe.fileHandleForReading)
                process.waitUntilExit()
                return (process.terminationStatus, String(decoding: data, as: UTF8.self))
            }
            let shown = try await asNobody(["show"])
            #expect(shown.status == 0, "\(shown.output)")
            #expect(shown.output.contains("Database.Password = <redacted>"))
            #expect(!shown.output.contains("hunter2"))
            for arguments in [
                ["reload"], ["check"], ["show", "--show-secrets"], ["get", "Database.Password", "--show-secrets"],
            ] {
                let denied = try await asNobody(arguments)
                #expect(denied.status == 1, "\(arguments): \(denied.output)")
                #expect(denied.output.contains("permission denied"), "\(arguments): \(denied.output)")
                #expect(!denied.output.contains("hunter2"))
            }
            #expect(environment.generation == 1)
            // Root (this process) may.
            let root = try await ControlSocketFixture.call(fixture.socket, .reload)
            #expect(root.error == nil)
        }
    }

    /// Raw bytes to the socket; returns what came back before the daemon closed the connection.
    /// Writes `bytes` and reads until the daemon closes, `replies` replies arrived (if given),
    /// or `timeout` passed.
    static func exchange(
        _ socket: String, _ bytes: [UInt8], replies: Int? = nil, timeout: Duration = .seconds(10)
    ) async throws -> (
        reply: String, closed: Bool
    ) {
        try await onThread { try exchangeBlocking(socket, bytes, replies: replies, timeout: timeout) }
    }

    static func exchangeBlocking(_ socket: String, _ bytes: [UInt8], replies: Int? = nil, timeout: Duration) throws
        -> (
            reply: String, closed: Bool
        )
    {
        let descriptor = UnixSocket.makeStreamSocket()
        defer { close(descriptor) }
        guard let address = UnixSocket.address(socket), UnixSocket.connect(descriptor, to: address) == 0 else {
            throw POSIXError(.ECONNREFUSED)
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { break }  // The daemon may close before it has read everything.
            offset += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, UnixSocket.millisecondsLeft(until: deadline)) > 0 else { break }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
            received += buffer[..<count]
            if let replies, received.count(where: { $0 == 0 }) >= replies { break }
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    /// Whether the daemon on `fixture`'s socket answers a call (`Get` of `Greeting`) without an
    /// error.
    static func answers(_ fixture: ControlSocketFixture) async throws -> Bool {
        let reply = try await ControlSocketFixture.call(
            fixture.socket, .get, ["key": .string("Greeting")])
        return reply.error == nil
    }

    @Test("bad input gets an error and the connection closed; the daemon keeps answering")
    func badInput() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        let service = fixture.service(environment) {
            $0.maximumMessageSize = 1024
            $0.maximumPrivilegedMessageSize = 1024  // This process is root.
        }
        try await service.whileRunning {
            let malformed = try await Self.exchange(fixture.socket, Array("{\"method\": \u{0}".utf8))
            #expect(malformed.closed)
            #expect(malformed.reply.contains(ControlInterface.Error.invalidMessage.qualifiedName))
            let notACall = try await Self.exchange(fixture.socket, Array("[1,2,3]\u{0}".utf8))
            #expect(notACall.closed && notACall.reply.contains(ControlInterface.Error.invalidMessage.qualifiedName))
            let huge = try await Self.exchange(fixture.socket, [UInt8](repeating: UInt8(ascii: "a"), count: 100_000))
            #expect(huge.closed)
            #expect(huge.reply.contains("larger than 1024 bytes"))
            // Several calls in one write are answered in order.
            let call = try VarlinkCoding.encode(
                VarlinkCall(method: ControlInterface.Method.get.qualifiedName, parameters: ["key": .string("Greeting")])
            )
            // Read until three replies came (a loaded machine may send them in several reads).
            let pipelined = try await Self.exchange(
                fixture.socket, call + call + call, replies: 3, timeout: .seconds(120))
            #expect(pipelined.reply.split(separator: "\u{0}").count == 3)
            #expect(try await Self.answers(fixture))
        }
    }

    /// Runs `body` against a service that takes four connections at most and closes idle ones
    /// after `idleTimeout`, while four clients that connect and say nothing (one sends half a
    /// call) hold every slot; they are closed after `body`.
    static func withSilentClients(
        idleTimeout: Duration,
        _ body: @Sendable (ControlSocketFixture, EnvironmentService, inout [Int32]) async throws -> Void
    ) async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        let service = fixture.service(environment) {
            $0.maximumConnections = 4
            $0.idleTimeout = idleTimeout
        }
        try await service.whileRunning {
            var silent: [Int32] = (0..<4).map { index in
                let descriptor = UnixSocket.makeStreamSocket()
                #expect(UnixSocket.connect(descriptor, to: UnixSocket.address(fixture.socket)!) == 0)
                if index == 0 { _ = send(descriptor, "{\"meth", 6, Int32(MSG_NOSIGNAL)) }
                return descriptor
            }
            defer { silent.forEach { close($0) } }
            try await body(fixture, service, &silent)
        }
    }

    @Test("connections are bounded; a stuck client does not hold up reloads; a freed slot is used again")
    func limits() async throws {
        // An idle timeout far longer than the test: a loaded machine must not free a slot
        // before the fifth client connects.
        try await Self.withSilentClients(idleTimeout: .seconds(600)) { fixture, service, silent in
            // While they hold every slot, a reload through the environment is not held up.
            try fixture.write(ControlSocketFixture.plist("meanwhile"))
            #expect(await service.reloader.reload(trigger: .signal).outcome == .applied)
            // The fifth is refused at once, with a word why.
            let refused = try await Self.exchange(fixture.socket, Array("{}\u{0}".utf8), timeout: .seconds(5))
            #expect(refused.closed && refused.reply.contains(ControlInterface.Error.tooManyConnections.qualifiedName))
            // Once one of them hangs up, calls are answered again.
            close(silent.removeLast())
            var answered = false
            for _ in 0..<100 where !answered {
                answered = (try? await Self.answers(fixture)) ?? false
                if !answered { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(answered)
        }
    }

    @Test("idle connections are closed by the daemon, a half-sent call among them")
    func idleConnections() async throws {
        try await Self.withSilentClients(idleTimeout: .milliseconds(300)) { fixture, _, silent in
            for descriptor in silent {
                var buffer = [UInt8](repeating: 0, count: 16)
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                #expect(poll(&entry, 1, 10_000) == 1)
                #expect(recv(descriptor, &buffer, buffer.count, 0) == 0, "closed by the daemon")
            }
            let answered = try await Self.answers(fixture)
            #expect(answered)
        }
    }

    @Test("a stale socket left by a crash is replaced; a live one is not taken over")
    func staleSocket() async throws {
        let fixture = try ControlSocketFixture()
        // A socket file nobody listens on: what a killed daemon leaves.
        let stale = UnixSocket.makeStreamSocket()
        var address = UnixSocket.address(fixture.socket)!
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        close(stale)
        let environment = try fixture.environment()
        try await fixture.service(environment).whileRunning {
            #expect(try await ControlSocketFixture.call(fixture.socket, .describe).error == nil)
            // A second service on the same path does not steal the first one's socket.
            let second = fixture.service(try fixture.environment())
            try await second.whileRunning {}
            #expect(try await ControlSocketFixture.call(fixture.socket, .describe).error == nil)
        }
    }
}
