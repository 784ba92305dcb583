import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import JSONText
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
    import Glibc
#endif

/// A configuration of about a hundred thousand keys, in drop-ins each well under the per-file
/// cap: the daemon runs with it, and envctl shows, gets, diffs and sets against it (the
/// `Describe` answer comes in parts).
@Suite("large configurations", .serialized, .timeLimit(.minutes(10)), .blocking)
struct LargeConfigurationTests {
    static let dropIns = 5
    static let keysPerDropIn = 20_000

    /// `Environments.plist.d/10-bulk-N.plist`: `BulkN.KeyNNNNN = value-N-NNNNN` in Common.
    static func dropIn(_ number: Int) -> String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>Common</key><dict><key>Bulk\(number)</key><dict>

            """
        text.reserveCapacity(keysPerDropIn * 64)
        for index in 0..<keysPerDropIn {
            let key = "Key" + String(repeating: "0", count: 5 - String(index).count) + String(index)
            text += "<key>\(key)</key><string>value-\(number)-\(index)</string>\n"
        }
        text += "</dict></dict></dict></plist>\n"
        return text
    }

    /// Runs envctl with its output in a file (a hundred thousand lines fill any pipe), taking
    /// the daemon's notifications meanwhile as systemd would.
    static func envctl(_ daemon: DaemonHarness, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outputPath = daemon.root.appendingPathComponent("envctl-\(UUID().uuidString.prefix(8)).out").path
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
        process.arguments = arguments
        process.environment = daemon.environment
        process.standardOutput = output
        process.standardError = output
        try process.run()
        while process.isRunning {
            daemon.notify.drain()
            usleep(2_000)
        }
        process.waitUntilExit()
        try output.close()
        return (process.terminationStatus, try String(contentsOfFile: outputPath, encoding: .utf8))
    }

    @Test("show, get, diff --running and set work with about 100,000 keys")
    func hundredThousandKeys() async throws {
        try await onThread { try Self.hundredThousandKeys() }
    }

    static func hundredThousandKeys() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        let directory = daemon.configDirectory.appendingPathComponent("Environments.plist.d")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for number in 1...Self.dropIns {
            try Self.dropIn(number).write(
                to: directory.appendingPathComponent("10-bulk-\(number).plist"), atomically: true, encoding: .utf8)
        }
        try daemon.start()
        #expect(daemon.waitForDatagram(timeout: .seconds(120)) { $0.contains("READY=1") } != nil, "\(daemon.log)")
        let pid = String(daemon.pid)
        let total = Self.dropIns * Self.keysPerDropIn

        let show = try Self.envctl(daemon, ["show", "--pid", pid, "--timeout", "120"])
        #expect(show.status == 0, "\(show.output.prefix(2000))")
        let lines = show.output.split(separator: "\n")
        #expect(lines.count >= total, "\(lines.count) lines")
        #expect(lines.contains { $0.hasPrefix("Bulk3.Key01234 ") && $0.contains("= value-3-1234 ") })
        #expect(lines.contains { $0.hasPrefix("Bulk5.Key19999 ") && $0.contains("= value-5-19999 ") })

        // Through the socket: without `more` the answer is too long for one reply, and says so;
        // with it, every setting comes, in parts.
        let socket = daemon.runtimeDirectory.appendingPathComponent(ControlInterface.socketFileName).path
        let client = VarlinkClient(path: socket, timeout: .seconds(120))
        let single = try client.call(VarlinkCall(method: ControlInterface.Method.describe.qualifiedName))
        #expect(single.error == "org.varlink.service.ExpectedMore")
        var parts = 0
        var assembled: DescribeReply?
        let failure = try client.callWithMore(
            VarlinkCall(method: ControlInterface.Method.describe.qualifiedName), decoding: DescribeReply.self
        ) { part throws(VarlinkClientError) in
            parts += 1
            if assembled == nil { assembled = part } else { try assembled?.append(part: part) }
        }
        #expect(failure == nil)
        #expect(parts > 10)
        #expect((assembled?.settings.count ?? 0) >= total)
        #expect(assembled?.files.count == Self.dropIns + 1)
        #expect(Set(assembled?.settings.map(\.key) ?? []).count == assembled?.settings.count)

        let get = try Self.envctl(daemon, ["get", "Bulk4.Key00042", "--pid", pid])
        #expect(get.status == 0 && get.output == "value-4-42\n", "\(get.output)")

        let diff = try Self.envctl(
            daemon,
            [
                "diff", "--running", "--pid", pid, "--config-dir", daemon.configDirectory.path, "--timeout", "120",
            ])
        #expect(diff.status == 0, "\(diff.output.prefix(2000))")
        #expect(diff.output.contains("# no differences"), "\(diff.output.prefix(2000))")

        // In one of the large drop-ins: the candidate sent to the daemon's Check is about a megabyte.
        let set = try Self.envctl(
            daemon,
            [
                "set", "Bulk2.Key00007", "changed", "--drop-in", "10-bulk-2", "--pid", pid, "--timeout", "120",
                "--allow-undeclared",
            ])
        #expect(set.status == 0, "\(set.output.prefix(2000))")
        let deadline = ContinuousClock.now + .seconds(120)
        var value = ""
        while ContinuousClock.now < deadline {
            value = try Self.envctl(daemon, ["get", "Bulk2.Key00007", "--pid", pid]).output
            if value == "changed\n" { break }
            usleep(100_000)
        }
        #expect(value == "changed\n")
    }
}

@Test("a setting's hand-made JSON is what the encoder makes")
func settingJSON() throws {
    for record in [
        SettingRecord(
            key: "A.B", value: "x\"\n", type: "string", secret: false,
            source: SourceRecord(layer: "common", file: "/etc/x/Environments.plist", section: "Common")),
        SettingRecord(
            key: "P", value: nil, type: "string", secret: true,
            source: SourceRecord(layer: "defaults", file: nil, section: nil)),
    ] {
        #expect(record.jsonValue == (try JSONValueEncoder().encode(record)))
    }
}

/// `Describe` in parts, against the real server in this process with tiny parts.
@Suite("Describe in parts", .serialized, .timeLimit(.minutes(10)), .blocking)
struct DescribePartsTests {
    static func plist(port: Int) -> String {
        var keys = ""
        for index in 0..<60 { keys += "<key>K\(index)</key><string>value \(index) \"quoted\"</string>\n" }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>Common</key><dict>
            \(keys)<key>ListenPort</key><integer>\(port)</integer>
            <key>Database</key><dict><key>Password</key><string>${credential:db-password}</string></dict>
            </dict>
            <key>Production</key><dict/>
            <key>RestartRequired</key><array><string>ListenPort</string></array>
            </dict></plist>
            """
    }

    /// Every reply to `bytes` on one connection, until one ends without `continues` and
    /// `count` such ends were seen.
    static func replies(_ socket: String, _ bytes: [UInt8], calls: Int = 1) throws -> [VarlinkReply] {
        let descriptor = UnixSocket.makeStreamSocket()
        defer { close(descriptor) }
        guard let address = UnixSocket.address(socket), UnixSocket.connect(descriptor, to: address) == 0 else {
            throw POSIXError(.ECONNREFUSED)
        }
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var framer = VarlinkFramer(maximumMessageSize: 1 << 20)
        var replies: [VarlinkReply] = []
        var ended = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ended < calls {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20_000) > 0 else { throw POSIXError(.ETIMEDOUT) }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            for case .message(let message) in framer.append(buffer[..<count]) {
                let reply = try VarlinkCoding.decode(VarlinkReply.self, from: message)
                replies.append(reply)
                if reply.continues != true { ended += 1 }
            }
        }
        return replies
    }

    @Test("parts are valid replies from one generation; without more, a long answer is ExpectedMore")
    func parts() async throws {
        let fixture = try ControlSocketFixture()
        try fixture.write(Self.plist(port: 8080))
        let environment = try fixture.environment()
        let service = fixture.service(environment) {
            $0.describePartSize = 300
            $0.maximumUnpagedReplySize = 2000
        }
        try await service.whileRunning {
            // A restart-only key waits, and there is a last reload to report.
            try fixture.write(Self.plist(port: 9090))
            #expect(try await ControlSocketFixture.call(fixture.socket, .reload).error == nil)

            let describe = try VarlinkCoding.encode(
                VarlinkCall(method: ControlInterface.Method.describe.qualifiedName, more: true))
            let replies = try await onThread { try Self.replies(fixture.socket, describe) }
            #expect(replies.count > 10)
            #expect(replies.dropLast().allSatisfy { $0.continues == true && $0.error == nil })
            #expect(replies.last?.continues == nil)
            var assembled: DescribeReply?
            for (index, reply) in replies.enumerated() {
                // Each part is a whole Describe reply: every required field is there.
                let part = try JSONValue.record(DescribeReply.self, from: reply.parameters)
                #expect(part.generation == 2 && part.environment == "Production")
                #expect(part.files == (index == 0 ? [fixture.mainFile] : []))
                #expect((part.lastReload != nil) == (index == 0))
                if assembled == nil { assembled = part } else { try assembled?.append(part: part) }
            }
            let keys = assembled?.settings.map(\.key) ?? []
            #expect(keys == environment.snapshot.leafKeys)
            #expect(assembled?.settings.first { $0.key == "K7" }?.value == "value 7 \"quoted\"")
            #expect(assembled?.settings.first { $0.key == "Database.Password" }?.value == nil)
            #expect(assembled?.pendingRestart.map(\.key) == ["ListenPort"])
            #expect(assembled?.pendingRestart.first?.next.value == "9090")
            #expect(assembled?.lastReload?.trigger == "control")

            // Without more: too long for one reply.
            let single = try await ControlSocketFixture.call(fixture.socket, .describe)
            #expect(single.error == "org.varlink.service.ExpectedMore")

            // On one connection, in order: a oneway Describe (no reply), one in parts, then a Get.
            var oneway = VarlinkCall(method: ControlInterface.Method.describe.qualifiedName, more: true)
            oneway.oneway = true
            let get = VarlinkCall(method: ControlInterface.Method.get.qualifiedName, parameters: ["key": .string("K1")])
            let pipelined = try VarlinkCoding.encode(oneway) + describe + VarlinkCoding.encode(get)
            let answers = try await onThread { try Self.replies(fixture.socket, pipelined, calls: 2) }
            #expect(answers.count == replies.count + 1)
            #expect(answers.last?.parameters?["setting"]?.objectValue?["value"] == .string("value 1 \"quoted\""))
        }
        // With room for it, the answer without more is one reply with the same settings.
        let roomy = fixture.service(try fixture.environment())
        try await roomy.whileRunning {
            let single = try await ControlSocketFixture.call(fixture.socket, .describe)
            #expect(single.error == nil && single.continues == nil)
            let whole = try JSONValue.record(DescribeReply.self, from: single.parameters)
            #expect(whole.settings.map(\.key) == environment.snapshot.leafKeys)
            #expect(whole.files == [fixture.mainFile])
        }
    }
}
