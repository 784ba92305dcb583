import Environments
import EnvironmentsControl
import EnvironmentsDaemon
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Interpolation that would grow without bound (`A2 = ${A1}${A1}` and so on), through the real
/// example daemon and envctl: a reload is rejected with the file, the key and the limit, the
/// daemon keeps its last good configuration (and its memory), and a start fails with that error.
@Suite("hostile interpolation, through the daemon", .blocking)
struct HostileInterpolationTests {
    /// A drop-in whose 30 values each double the last: 512 MiB at the end, were it built.
    static let doublingDropIn: String = {
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<plist version=\"1.0\">", "<dict>"]
        lines.append("<key>Staging</key><dict>")
        lines.append("<key>A1</key><string>x</string>")
        for index in 2...30 { lines.append("<key>A\(index)</key><string>${A\(index - 1)}${A\(index - 1)}</string>") }
        lines += ["</dict>", "</dict>", "</plist>"]
        return lines.joined(separator: "\n")
    }()

    /// The daemon's peak resident memory (VmHWM), in bytes.
    static func peakResidentBytes(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kibibytes * 1024
    }

    @Test(
        "a doubling drop-in: envctl reload and check exit 1 naming file, key and limit; the daemon keeps generation 1")
    func reloadIsRejectedAndTheDaemonKeepsItsConfiguration() throws {
        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start()
        _ = try #require(daemon.waitForDatagram { $0.contains("READY=1") })
        let baseline = try #require(Self.peakResidentBytes(of: daemon.pid))

        let directory = daemon.configDirectory.appendingPathComponent("Environments.plist.d")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let dropIn = directory.appendingPathComponent("50-hostile.plist")
        try Self.doublingDropIn.write(to: dropIn, atomically: true, encoding: .utf8)

        // The synchronous reload (systemctl reload's ExecReload=); the file watcher may try it too.
        let reload = try daemon.envctl(["reload", "--pid", String(daemon.pid), "--timeout", "20"])
        #expect(reload.status == 1, "\(reload.output)")
        #expect(reload.output.contains("reload rejected by the daemon"))
        for expected in [dropIn.path, "'A22'", "1 MiB"] {
            #expect(reload.output.contains(expected), "\(reload.output)")
        }

        // A SIGHUP is rejected the same way.
        daemon.signal(SIGHUP)
        #expect(daemon.waitForLog("Configuration reload rejected, keeping generation 1"))

        // The control socket's Check and envctl reading the files say the same, and exit 1.
        let check = try daemon.envctl(["check", "--pid", String(daemon.pid), "--timeout", "20"])
        #expect(check.status == 1, "\(check.output)")
        #expect(check.output.contains("1 MiB") && check.output.contains(dropIn.path), "\(check.output)")
        let files = try daemon.envctl([
            "check", "--config-dir", daemon.configDirectory.path, "--environment", "Staging",
        ])
        #expect(files.status != 0, "\(files.output)")
        #expect(files.output.contains("1 MiB") && files.output.contains("'A22'"), "\(files.output)")

        #expect(daemon.process?.isRunning == true)
        let state = try ReloadState.read(from: daemon.stateFile)
        #expect(state.generation == 1)
        #expect(state.lastReload?.outcome == .rejected)
        // Gigabytes before the caps; now a few MiB (generous bound, not a benchmark).
        let peak = try #require(Self.peakResidentBytes(of: daemon.pid))
        #expect(peak - baseline < 100 << 20, "peak \(peak >> 20) MiB, baseline \(baseline >> 20) MiB")

        // Without the drop-in, the next reload applies.
        try FileManager.default.removeItem(at: dropIn)
        try examplePlist(apiHost: "after.example.com").write(to: daemon.mainFile, atomically: true, encoding: .utf8)
        let good = try daemon.envctl(["reload", "--pid", String(daemon.pid), "--timeout", "20"])
        #expect(good.status == 0, "\(good.output)")
        #expect(daemon.waitForLog("APIBaseUrl=https://after.example.com/v1"))
    }

    @Test("a chain of 100,000 references: the daemon starts; a doubling drop-in at start is a start failure")
    func startWithDeepChainAndWithDoubling() throws {
        // A chain of 100,000 keys, APIHost at its end: deep enough to overflow the stack of a
        // resolver that recursed once per reference.
        var chain = ["<key>K0</key><string>chained.example.com</string>"]
        for index in 1..<100_000 { chain.append("<key>K\(index)</key><string>${K\(index - 1)}</string>") }
        let deep = examplePlist(apiHost: "${K99999}").replacingOccurrences(
            of: "<key>Staging</key>\n    <dict>",
            with: "<key>Staging</key>\n    <dict>\n" + chain.joined(separator: "\n"))
        #expect(deep.contains("<key>K99999</key>"))
        let daemon = try DaemonHarness(plist: deep)
        try daemon.start()
        // A deadline, not a timing goal: a debug build under ThreadSanitizer takes tens of
        // seconds to load 100,000 keys.
        #expect(daemon.waitForDatagram(timeout: .seconds(300)) { $0.contains("READY=1") } != nil)
        #expect(daemon.waitForLog("APIBaseUrl=https://chained.example.com/v1", timeout: .seconds(60)))

        let hostile = try DaemonHarness(plist: examplePlist())
        let directory = hostile.configDirectory.appendingPathComponent("Environments.plist.d")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let dropIn = directory.appendingPathComponent("50-hostile.plist")
        try Self.doublingDropIn.write(to: dropIn, atomically: true, encoding: .utf8)
        try hostile.start()
        #expect(hostile.waitForExit() == 1)
        #expect(hostile.log.contains("cannot start"))
        #expect(hostile.log.contains(dropIn.path) && hostile.log.contains("1 MiB"), "\(hostile.log)")
    }
}
