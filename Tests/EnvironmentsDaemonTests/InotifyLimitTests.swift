import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The kernel's per-user inotify limit (`fs.inotify.max_user_instances`, 128 by default) used
/// up by another program of the same user: the daemon starts anyway, polls, says so, and
/// returns to inotify once an instance is free. The limit is exhausted for one unprivileged
/// user id only, never for the machine.
@Suite("inotify limits", .serialized, .blocking)
struct InotifyLimitTests {
    /// A user id no account uses, so that nothing else counts against its limit.
    private static func unusedUserID() throws -> UInt32 {
        let passwd = (try? String(contentsOfFile: "/etc/passwd", encoding: .utf8)) ?? ""
        let taken = Set(passwd.split(separator: "\n").compactMap { $0.split(separator: ":").dropFirst(2).first })
        for _ in 0..<100 {
            let candidate = UInt32.random(in: 61_000..<64_000)
            if !taken.contains(Substring(String(candidate))) { return candidate }
        }
        throw POSIXError(.EEXIST)
    }

    /// A process, running as `user`, that takes inotify instances until the kernel refuses
    /// and holds them until it is terminated.
    private final class InotifyHog {
        let process = Process()
        let instances: Int

        init(user: UInt32) throws {
            let script = """
                import ctypes, os, resource, sys
                soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
                libc = ctypes.CDLL(None, use_errno=True)
                held = []
                while True:
                    fd = libc.inotify_init1(0)
                    if fd < 0:
                        break
                    held.append(fd)
                print(len(held), os.strerror(ctypes.get_errno()), flush=True)
                sys.stdin.read()
                """
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--reuid", String(user), "--regid", String(user), "--clear-groups", "--", "/usr/bin/python3", "-c",
                script,
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardInput = Pipe()
            try process.run()
            let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
            instances = Int(line.split(separator: " ").first ?? "") ?? -1
        }

        /// Frees the instances. SIGKILL: a child of the test process inherits its blocked
        /// signals, SIGTERM among them.
        func release() {
            guard process.isRunning else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        deinit { release() }
    }

    @Test("the limit used up: the daemon polls, says so, and returns to inotify once it can")
    func exhaustedInstancesFallBackToPollingAndBack() throws {
        let limit =
            Int(
                (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_instances", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
        // A process can hold as many instances as it may open files; beyond that one process
        // cannot use up the user's limit.
        try #require(limit > 0 && limit <= 4096, "fs.inotify.max_user_instances is \(limit)")
        let user = try Self.unusedUserID()
        let hog = try InotifyHog(user: user)
        defer { hog.release() }
        #expect(hog.instances == limit, "the hog took \(hog.instances) of \(limit) instances")

        let daemon = try DaemonHarness(plist: examplePlist())
        try daemon.start(user: user)
        // It starts anyway, and STATUS= says how it watches.
        let ready = try #require(daemon.waitForDatagram { $0.contains("READY=1") }, "\(daemon.log)")
        #expect(ready.contains("watching files by polling"), "\(ready)")
        #expect(ready.contains("inotify_init1"), "\(ready)")
        #expect(daemon.log.contains("inotify is not available; polling for file changes instead"), "\(daemon.log)")

        // A change is applied by polling.
        try daemon.replaceMainFile(with: examplePlist(apiHost: "polled.example.com"))
        #expect(
            daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 2") } != nil, "\(daemon.log)")

        // Instances free again: it returns to inotify (it tries every 10 s) and says so.
        hog.release()
        let back = daemon.waitForDatagram(timeout: .seconds(30)) {
            $0.hasPrefix("STATUS=") && !$0.contains("polling")
        }
        #expect(back != nil, "\(daemon.log)")
        #expect(daemon.log.contains("Watching for file changes with inotify again"), "\(daemon.log)")
        try daemon.replaceMainFile(with: examplePlist(apiHost: "watched.example.com"))
        #expect(
            daemon.waitForDatagram { $0.contains("READY=1") && $0.contains("generation 3") } != nil, "\(daemon.log)")
        #expect(daemon.process?.isRunning == true)
    }
}
