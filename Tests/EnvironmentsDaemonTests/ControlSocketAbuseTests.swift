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

/// Hostile local users against the control socket: clients run as other users (uid 65534 and
/// neighbours, through `setpriv`) hold, trickle, flood and never read, while root still
/// reloads and describes; the log about them stays short.
@Suite("control socket under abuse", .serialized, .timeLimit(.minutes(10)), .blocking)
struct ControlSocketAbuseTests {
    static let python = "/usr/bin/python3"
    static var canRun: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: python) }

    static func service(
        _ fixture: ControlSocketFixture, _ environment: Environment, log: KeptLog,
        configure: (inout ControlSocketConfiguration) -> Void
    ) -> EnvironmentService {
        var configuration = EnvironmentService.Configuration.inTest(controlSocket: fixture.socket)
        configure(&configuration.controlSocket)
        return EnvironmentService(
            environment: environment, reloadSignals: nil, configuration: configuration,
            logger: Logger(label: "abuse-tests") { _ in log.handler(logLevel: .debug) })
    }

    /// The misbehaving clients' script, written where another user can read it.
    static func script(in fixture: ControlSocketFixture) throws -> String {
        let path = fixture.root + "/misbehave.py"
        try misbehave.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(fixture.root, 0o755)
        chmod(path, 0o644)
        return path
    }

    /// The script run as `uid`; its standard input stays open until `finish` is called.
    final class Misbehaving: @unchecked Sendable {
        let process = Process()
        let output = Pipe()
        let input = Pipe()

        init(uid: UInt32, script: String, arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", ControlSocketAbuseTests.python, script]
                + arguments
            process.standardOutput = output
            process.standardInput = input
            process.standardError = FileHandle.standardError
            try process.run()
        }

        /// The script's next line of output.
        func line() throws -> String {
            var bytes: [UInt8] = []
            while true {
                let data = output.fileHandleForReading.readData(ofLength: 1)
                guard let byte = data.first else { throw POSIXError(.EPIPE) }
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
        }

        func summary() throws -> [String: Int] {
            let text = try line()
            return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Int]) ?? [:]
        }

        func finish() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    static func envctl(_ arguments: [String]) throws -> FinishedProcess {
        try runToEnd(BuiltProducts.envctl, arguments)
    }

    @Test(
        "while other users hold, trickle, flood and never read, root reloads and describes; the log stays short",
        .enabled(if: canRun))
    func storm() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        let log = KeptLog()
        let service = Self.service(fixture, environment, log: log) {
            // Short enough that every mechanism fires while the storm lasts.
            $0.idleTimeout = .milliseconds(700)
            $0.callTimeout = .milliseconds(300)
            $0.clientWarningInterval = .seconds(1)
        }
        let script = try Self.script(in: fixture)
        let seconds = 4.0
        try await service.whileRunning {
            // Three users at once, so that together they would take every connection if they could.
            let storms = try [65534, 65533, 65532].map {
                try Misbehaving(uid: $0, script: script, arguments: ["storm", fixture.socket, "\(seconds)"])
            }
            for storm in storms { #expect(try await onThread { try storm.line() } == "ready") }
            var rounds = 0
            let end = ContinuousClock.now + .seconds(seconds - 1)
            while ContinuousClock.now < end {
                rounds += 1
                let reload = try await ControlSocketFixture.call(fixture.socket, .reload)
                #expect(reload.error == nil, "\(reload)")
                let described = try await onThread {
                    var replies: [VarlinkReply] = []
                    try VarlinkClient(path: fixture.socket, timeout: .seconds(20)).callWithMore(
                        VarlinkCall(method: ControlInterface.Method.describe.qualifiedName)
                    ) { reply throws(VarlinkClientError) in replies.append(reply) }
                    return replies
                }
                #expect(!described.isEmpty && described.allSatisfy { $0.error == nil }, "\(described)")
                let cli = try await onThread { try Self.envctl(["reload", "--socket", fixture.socket]) }
                #expect(cli.status == 0, "\(cli.output)")
                let shown = try await onThread { try Self.envctl(["show", "--socket", fixture.socket]) }
                #expect(shown.status == 0 && shown.output.contains("= hello"), "\(shown.output)")
            }
            #expect(rounds >= 1)
            var totals: [String: Int] = [:]
            for storm in storms {
                totals.merge(try await onThread { try storm.summary() }, uniquingKeysWith: +)
                storm.finish()
            }
            // The storm was real: connections were refused and every kind of abuse was tried.
            #expect(totals["refused", default: 0] > 0, "\(totals)")
            for kind in [
                "hog_peak", "idle", "trickle", "keepalive", "garbage", "not_a_call", "huge", "never_read", "open_close",
            ] {
                #expect(totals[kind, default: 0] > 0, "\(kind): \(totals)")
            }
        }
        // At most 5 warnings a second about clients, and a count of the rest.
        let warnings = log.count { $0.level == .warning && $0.message.hasPrefix("control socket:") }
        let suppressed = log.all.filter { $0.level == .warning && $0.message.contains("similar warnings suppressed") }
        #expect(!suppressed.isEmpty)
        let windows = Int(seconds) + 3
        #expect(warnings <= windows * 6, "\(warnings) warnings")
        let counted = suppressed.compactMap { Int($0.1.split(separator: " ")[2]) }.reduce(0, +)
        #expect(counted > warnings, "the suppressed (\(counted)) outnumber the logged (\(warnings))")
    }

    @Test(
        "each other user has a few connections; together they never take the ones kept for root", .enabled(if: canRun))
    func connectionShares() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        let service = Self.service(fixture, environment, log: KeptLog()) {
            $0.maximumConnections = 12
            $0.reservedPrivilegedConnections = 4
            $0.maximumConnectionsPerUser = 3
        }
        let script = try Self.script(in: fixture)
        try await service.whileRunning {
            var holders: [Misbehaving] = []
            defer { holders.forEach { $0.finish() } }
            var answered: [Int] = []
            for uid: UInt32 in [65534, 65533, 65532] {
                let holder = try Misbehaving(uid: uid, script: script, arguments: ["hold", fixture.socket, "6"])
                holders.append(holder)
                answered.append(try await onThread { try holder.summary() }["answered", default: -1])
            }
            // Three each for the first two users; the third gets the two left of the eight shared.
            #expect(answered == [3, 3, 2])
            // Root has its four, each answered while the others hold theirs.
            var mine: [Int32] = []
            defer { mine.forEach { close($0) } }
            for _ in 0..<4 {
                let descriptor = UnixSocket.makeStreamSocket()
                #expect(UnixSocket.connect(descriptor, to: try #require(UnixSocket.address(fixture.socket))) == 0)
                mine.append(descriptor)
            }
            let call = try VarlinkCoding.encode(VarlinkCall(method: "org.varlink.service.GetInfo"))
            for descriptor in mine {
                let reply = try await onThread { try Self.exchange(descriptor, call) }
                #expect(reply.contains("interfaces"), "\(reply)")
            }
            // With all twelve taken, even root is told why it is refused.
            let refused = try await ControlSocketFixture.call(fixture.socket, "org.varlink.service.GetInfo")
            #expect(refused.error == ControlInterface.Error.tooManyConnections.qualifiedName)
            #expect(refused.parameters?["reason"]?.stringValue?.contains("12 connections") == true)
        }
    }

    /// Sends `bytes` on an open connection and returns the first reply.
    static func exchange(_ descriptor: Int32, _ bytes: [UInt8]) throws -> String {
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.contains(0) {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20_000) > 0 else { break }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Waits (up to 20 s, only so as never to hang) for the daemon to close `descriptor`,
    /// sending `byte` every 50 ms meanwhile; returns what the daemon sent.
    static func trickleUntilClosed(_ descriptor: Int32, first: [UInt8], byte: UInt8) throws -> (String, closed: Bool) {
        _ = first.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, 50) > 0 {
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { return (String(decoding: received, as: UTF8.self), true) }
                received += buffer[..<count]
            }
            var one = byte
            _ = send(descriptor, &one, 1, Int32(MSG_NOSIGNAL))
        }
        return (String(decoding: received, as: UTF8.self), false)
    }

    @Test("bytes that never complete a call do not keep a connection open")
    func tricklers() async throws {
        let fixture = try ControlSocketFixture()
        let environment = try fixture.environment()
        let opening = Array(#"{"method":"io.swiftenvironments.Configuration.Get","parameters":{"key":""#.utf8)
        /// Runs `service` while a client trickles the call's opening and then one byte at a time,
        /// until the daemon closes the connection: what it said, and whether it closed it.
        @Sendable func trickle(_ service: EnvironmentService) async throws -> (reply: String, closed: Bool) {
            try await service.whileRunning {
                let descriptor = UnixSocket.makeStreamSocket()
                defer { close(descriptor) }
                #expect(UnixSocket.connect(descriptor, to: try #require(UnixSocket.address(fixture.socket))) == 0)
                let (reply, closed) = try await onThread {
                    try Self.trickleUntilClosed(descriptor, first: opening, byte: UInt8(ascii: "a"))
                }
                return (reply, closed)
            }
        }
        // A call that never ends: the call deadline closes it, with a word why.
        let deadline = try await trickle(
            Self.service(fixture, environment, log: KeptLog()) { $0.callTimeout = .milliseconds(200) })
        #expect(deadline.closed)
        #expect(deadline.reply.contains("did not arrive whole"), "\(deadline.reply)")
        // Whitespace between calls is no call either: the idle time runs on.
        let idle = try await trickle(
            Self.service(fixture, environment, log: KeptLog()) { $0.idleTimeout = .milliseconds(200) })
        #expect(idle.closed)
    }
}

extension ControlSocketAbuseTests {
    @Test("a client that asks for long answers and never reads them is closed, and the daemon says why")
    func neverReads() async throws {
        let fixture = try ControlSocketFixture()
        var keys = ""
        for index in 0..<3000 {
            keys += "<key>Key\(index)</key><string>\(String(repeating: "v", count: 100))</string>\n"
        }
        try fixture.write(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>Common</key><dict>\(keys)</dict><key>Production</key><dict/></dict></plist>
            """)
        let environment = try fixture.environment()
        let log = KeptLog()
        let service = Self.service(fixture, environment, log: log) { $0.idleTimeout = .milliseconds(300) }
        try await service.whileRunning {
            let descriptor = UnixSocket.makeStreamSocket()
            defer { close(descriptor) }
            #expect(UnixSocket.connect(descriptor, to: try #require(UnixSocket.address(fixture.socket))) == 0)
            // About 2 MB of answers asked for, none read.
            let call = try VarlinkCoding.encode(
                VarlinkCall(method: ControlInterface.Method.describe.qualifiedName, more: true))
            let calls = Array([[UInt8]](repeating: call, count: 4).joined())
            #expect(calls.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } > 0)
            let hungUp = try await onThread {
                var entry = pollfd(fd: descriptor, events: 0, revents: 0)
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    if poll(&entry, 1, 100) > 0, entry.revents & Int16(POLLHUP) != 0 { return true }
                }
                return false
            }
            #expect(hungUp)
            // Another client is answered meanwhile and after.
            #expect(try await ControlSocketFixture.call(fixture.socket, "org.varlink.service.GetInfo").error == nil)
        }
        #expect(log.all.contains { $0.level == .warning && $0.message.contains("does not read its replies") })
    }
}

/// Misbehaving clients, run by ``ControlSocketAbuseTests`` as other users.
let misbehave = #"""
    # Clients that misbehave on the control socket, run as an unprivileged user by ControlSocketAbuseTests.
    #   storm PATH SECONDS: every kind of misbehaviour at once; prints "ready", then a JSON summary.
    #   hold PATH N: opens N connections, one call on each, keeps them until stdin closes; prints a JSON summary.
    import json, os, select, socket, sys, threading, time

    path = sys.argv[2]
    lock = threading.Lock()
    counts = {}

    def count(name, n=1):
        with lock:
            counts[name] = counts.get(name, 0) + n

    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        return s

    def exchange(s, data):
        """Sends data; returns the first reply (without NUL), or None when closed without one."""
        try:
            s.sendall(data)
        except OSError:
            pass
        received = b""
        try:
            while b"\0" not in received:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
        except OSError:
            pass
        if b"\0" not in received:
            return None
        reply = received.split(b"\0")[0]
        if b"TooManyConnections" in reply:
            count("refused")
        return reply

    def call(method, more=False, params=None):
        message = {"method": method}
        if params is not None:
            message["parameters"] = params
        if more:
            message["more"] = True
        return json.dumps(message).encode() + b"\0"

    def hold(n):
        held, answered, refused = [], 0, 0
        for _ in range(n):
            try:
                s = connect()
            except OSError:
                refused += 1
                continue
            reply = exchange(s, call("org.varlink.service.GetInfo"))
            if reply is not None and b"interfaces" in reply:
                answered += 1
                held.append(s)
            else:
                refused += 1
                s.close()
        print(json.dumps({"answered": answered, "refused": refused}), flush=True)
        sys.stdin.read()

    def storm(seconds):
        deadline = time.monotonic() + seconds

        def loop(body):
            def run():
                while time.monotonic() < deadline:
                    try:
                        body()
                    except OSError:
                        count("oserror")
                        time.sleep(0.01)
            t = threading.Thread(target=run, daemon=True)
            t.start()
            return t

        def hog():
            # As many connections as it can get, each kept up with a byte now and then; a closed
            # one is opened again.
            held = []
            while time.monotonic() < deadline:
                while len(held) < 40:
                    try:
                        held.append(connect())
                    except OSError:
                        break
                count("hog_peak", 0)
                with lock:
                    counts["hog_peak"] = max(counts["hog_peak"], len(held))
                for s in list(held):
                    try:
                        s.send(b" ")
                    except OSError:
                        held.remove(s)
                        s.close()
                readable, _, _ = select.select(held, [], [], 0.1)
                for s in readable:
                    try:
                        data = s.recv(4096)
                    except OSError:
                        data = b""
                    if b"TooManyConnections" in data:
                        count("refused")
                    if not data or b"TooManyConnections" in data:
                        held.remove(s)
                        s.close()
            for s in held:
                s.close()

        def idle_holder():
            # Connects, says nothing; reconnects as soon as it is closed.
            s = connect()
            count("idle")
            try:
                while time.monotonic() < deadline:
                    s.settimeout(0.2)
                    try:
                        if s.recv(4096) == b"":
                            break
                    except socket.timeout:
                        pass
            finally:
                s.close()

        def trickler():
            # A call that never ends, one byte at a time, to look busy.
            s = connect()
            count("trickle")
            try:
                s.sendall(b'{"method":"io.swiftenvironments.Configuration.Get","parameters":{"key":"')
                while time.monotonic() < deadline:
                    s.sendall(b"a")
                    time.sleep(0.05)
            finally:
                s.close()

        def keepalive_byte():
            # A whole call now and then, and a lone byte in between.
            s = connect()
            count("keepalive")
            try:
                while time.monotonic() < deadline:
                    if exchange(s, call("org.varlink.service.GetInfo")) is None:
                        break
                    s.sendall(b" ")
                    time.sleep(0.1)
            finally:
                s.close()

        def garbage():
            s = connect()
            exchange(s, b"this is not json\0")
            s.close()
            count("garbage")

        def not_a_call():
            s = connect()
            exchange(s, b'[1,2,3]\0{"method":7}\0')
            s.close()
            count("not_a_call")

        def huge():
            s = connect()
            exchange(s, b"a" * (1 << 20))
            s.close()
            count("huge")

        def never_read():
            # Asks for long answers and never reads them.
            s = connect()
            count("never_read")
            try:
                s.sendall(call("io.swiftenvironments.Configuration.Describe", more=True) * 8
                          + call("io.swiftenvironments.Configuration.Describe") * 8)
                while time.monotonic() < deadline:
                    time.sleep(0.1)
            finally:
                s.close()

        def open_close():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.close()
            count("open_close")

        def denied():
            s = connect()
            exchange(s, call("io.swiftenvironments.Configuration.Reload")
                     + call("io.swiftenvironments.Configuration.Describe", params={"showSecrets": True}))
            s.close()
            count("denied")

        threads = []
        for body in [hog, idle_holder, idle_holder, trickler, trickler, keepalive_byte, never_read, never_read,
                     garbage, garbage, not_a_call, huge, open_close, open_close, denied]:
            threads.append(loop(body))
        time.sleep(0.5)
        print("ready", flush=True)
        for t in threads:
            t.join()
        print(json.dumps(counts), flush=True)

    if sys.argv[1] == "hold":
        hold(int(sys.argv[3]))
    else:
        storm(float(sys.argv[3]))
    """#
