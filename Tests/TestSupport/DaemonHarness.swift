package import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A temporary directory with an Environments.plist, a notify socket, a runtime directory
/// and a credentials directory, and the example daemon running on it.
package final class DaemonHarness: @unchecked Sendable {
    /// The temporary directory, `envd-XXXXXXXX` in `NSTemporaryDirectory()`, that holds the rest;
    /// removed when the harness is freed.
    package let root: URL
    /// The directory given as `--config-dir`, holding ``mainFile``; drop-ins go in its
    /// `Environments.plist.d`.
    package let configDirectory: URL
    /// The daemon's `$RUNTIME_DIRECTORY`: its control socket and ``stateFile`` are here. In
    /// ``root`` (`run`), or `/run/envd-XXXXXXXX` with `runtimeDirectoryBelowRun`.
    package let runtimeDirectory: URL
    /// The socket the daemon's `NOTIFY_SOCKET` names: where its `READY=1`, `RELOADING=1` and
    /// `STATUS=` datagrams arrive.
    package let notify: NotifySocket
    /// The file that takes the daemon's standard output and standard error (the daemon runs
    /// without a journal), as ``log`` reads it.
    package let logFile: URL
    /// The daemon's process once
    /// ``start(arguments:user:umask:configDirectoryArgument:currentDirectory:)`` has run it,
    /// else `nil`.
    package private(set) var process: Process?
    /// Every notify datagram ``waitForDatagram(timeout:_:)`` has received so far, oldest first,
    /// the one it returned included; a test may append those it receives itself.
    package var datagrams: [String] = []

    /// Makes the directories and the notify socket and writes `plist` as the main file; the
    /// daemon does not run until
    /// ``start(arguments:user:umask:configDirectoryArgument:currentDirectory:)``.
    ///
    /// - Parameters:
    ///   - plist: The main file's contents, usually from `examplePlist(…)`.
    ///   - extraEnvironment: Variables the daemon and envctl run with, added to ``environment``
    ///     (and replacing its own).
    ///   - unsetEnvironment: Variables the daemon and envctl run without (`RUNTIME_DIRECTORY`, to
    ///     find the socket by the application's name).
    ///   - runtimeDirectoryBelowRun: The runtime directory in `/run` (`/run/envd-XXXXXXXX`, root
    ///     only), as systemd's `RuntimeDirectory=` makes it, rather than in the temporary
    ///     directory; removed with the rest.
    package init(
        plist: String, extraEnvironment: [String: String] = [:], unsetEnvironment: [String] = [],
        runtimeDirectoryBelowRun: Bool = false
    ) throws {
        let name = "envd-\(UUID().uuidString.prefix(8))"
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(name)
        configDirectory = root.appendingPathComponent("etc")
        runtimeDirectory =
            runtimeDirectoryBelowRun
            ? URL(fileURLWithPath: "/run").appendingPathComponent(name) : root.appendingPathComponent("run")
        logFile = root.appendingPathComponent("daemon.log")
        for directory in [configDirectory, runtimeDirectory] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        notify = try NotifySocket(path: root.appendingPathComponent("notify.sock").path)
        self.extraEnvironment = extraEnvironment
        self.unsetEnvironment = unsetEnvironment
        try plist.write(to: mainFile, atomically: true, encoding: .utf8)
    }

    private let extraEnvironment: [String: String]
    private let unsetEnvironment: [String]

    /// The `Environments.plist` in ``configDirectory``, written from `plist` at first.
    package var mainFile: URL { configDirectory.appendingPathComponent("Environments.plist") }
    /// The path of the daemon's state file, `environment-state.json` in ``runtimeDirectory``,
    /// which it rewrites at start and after every reload attempt.
    package var stateFile: String {
        runtimeDirectory.appendingPathComponent("environment-state.json").path
    }

    /// The environment the daemon runs with: a notify socket, a runtime directory, no journal.
    package var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in [
            "JOURNAL_STREAM", "INVOCATION_ID", "WATCHDOG_USEC", "WATCHDOG_PID", "APP_ENVIRONMENT",
            "CONFIGURATION_DIRECTORY",
        ] {
            environment[key] = nil
        }
        environment["NOTIFY_SOCKET"] = notify.path
        environment["RUNTIME_DIRECTORY"] = runtimeDirectory.path
        environment.merge(extraEnvironment) { _, new in new }
        for key in unsetEnvironment { environment[key] = nil }
        return environment
    }

    /// Starts the daemon with `--config-dir` and `--environment Staging`; with `user`, as that
    /// user and group id (through `setpriv`, which the daemon's process replaces), with its
    /// runtime directory and notify socket made writable for it; with `umask` (octal, such as
    /// `"000"`), under that umask (through a shell that sets it and then becomes the daemon).
    ///
    /// With `configDirectoryArgument`, that is `--config-dir`'s value (a relative path, say),
    /// and the daemon runs in `currentDirectory` (default: the test's).
    package func start(
        arguments: [String] = ["--environment", "Staging"], user: UInt32? = nil, umask: String? = nil,
        configDirectoryArgument: String? = nil, currentDirectory: URL? = nil
    ) throws {
        let process = Process()
        let daemonArguments = ["--config-dir", configDirectoryArgument ?? configDirectory.path] + arguments
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", "umask \(umask) && exec \"$0\" \"$@\"", BuiltProducts.exampleDaemon] + daemonArguments
        } else if let user {
            guard chown(runtimeDirectory.path, user, user) == 0, chmod(notify.path, 0o777) == 0 else {
                throw POSIXError(.EPERM)
            }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid", String(user), "--regid", String(user), "--clear-groups", "--", BuiltProducts.exampleDaemon]
                + daemonArguments
        } else {
            process.executableURL = URL(fileURLWithPath: BuiltProducts.exampleDaemon)
            process.arguments = daemonArguments
        }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: logFile)
        process.standardError = log
        process.standardOutput = log
        try process.run()
        self.process = process
    }

    /// The daemon's process id, or 0 before it starts. With `user` or `umask`, `setpriv` or the
    /// shell replaces itself with the daemon, so the id is the daemon's all the same.
    package var pid: Int32 { process?.processIdentifier ?? 0 }

    /// The daemon's log so far.
    package var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// How long a wait lasts before it gives up: it only stops a stuck test, and returns as soon
    /// as what it waits for happens. In CI the test process sometimes gets no processor for
    /// about 30 s (the sanitizer lane's tests compute beside it on the two cores), and a daemon
    /// that fails at once was seen taking more than 20 s to exit.
    package static let patience: Duration = .seconds(90)

    /// Waits for a notify datagram that satisfies `predicate`.
    package func waitForDatagram(timeout: Duration = patience, _ predicate: (String) -> Bool)
        -> String?
    {
        notify.waitFor(timeout: timeout, seen: &datagrams, predicate)
    }

    /// Waits until the log contains `text`.
    package func waitForLog(_ text: String, timeout: Duration = patience) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if log.contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Whether the daemon's main thread has a handler for `signal` (from /proc/PID/status).
    package func catchesSignal(_ signal: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// Sends a signal to the daemon.
    package func signal(_ number: Int32) { kill(pid, number) }

    /// Waits for the daemon to exit; returns its status, or `nil` on timeout.
    package func waitForExit(timeout: Duration = patience) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let process, !process.isRunning {
                process.waitUntilExit()
                return process.terminationStatus
            }
            usleep(20_000)
        }
        return nil
    }

    /// Replaces the main file the way editors do: write a temporary file, rename it over.
    package func replaceMainFile(with text: String) throws {
        let temporary = configDirectory.appendingPathComponent(".Environments.plist.tmp")
        try text.write(to: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary.path, mainFile.path) == 0 else { throw POSIXError(.EIO) }
    }

    /// Runs envctl with `arguments` in the daemon's environment (with `extraEnvironment`
    /// added), in `currentDirectory` (default: the test's); returns status and output.
    package func envctl(
        _ arguments: [String], currentDirectory: URL? = nil, extraEnvironment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BuiltProducts.envctl)
        process.arguments = arguments
        process.environment = environment.merging(extraEnvironment) { _, new in new }
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Meanwhile, take the daemon's notifications as systemd would, so it never blocks on them.
        while process.isRunning {
            notify.drain()
            usleep(2_000)
        }
        let data = readToEnd(pipe.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    deinit {
        if let process, process.isRunning {
            process.terminate()
            // Read what it still notifies (STOPPING=1, ...) so it never blocks on a full queue.
            while process.isRunning {
                notify.drain()
                usleep(5_000)
            }
        }
        // Lets Foundation handle the termination: a `Process` it never saw end is never freed
        // (LeakSanitizer reports it).
        process?.waitUntilExit()
        try? FileManager.default.removeItem(at: root)
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }
}

/// An Environments.plist for the example daemon with the given Staging values; `moreCommon`
/// (keys and values, as XML) ends its `Common` section, `moreSections` (as XML) follows its
/// `Staging` section, and `secrets`, when there are any, make its `Secrets` list. Without them
/// it is the example's file, line for line.
package func examplePlist(
    apiHost: String = "staging.example.com", logLevel: String = "info", listenPort: Int = 8080,
    apiBaseURL: String = "https://${APIHost}/v1", moreCommon: String = "", moreSections: String = "",
    secrets: [String] = []
) -> String {
    /// `xml` on lines of its own, indented by `depth` levels; nothing for no XML.
    func lines(_ xml: String, depth: Int) -> String {
        xml.split(separator: "\n").map { "\n" + String(repeating: "    ", count: depth) + $0 }.joined()
    }
    let secretsList =
        secrets.isEmpty ? "" : "<key>Secrets</key><array>\(secrets.map { "<string>\($0)</string>" }.joined())</array>"
    return plistDocument(
        """
            <key>Common</key>
            <dict>
                <key>APIHost</key><string>api.example.com</string>
                <key>APIBaseUrl</key><string>\(apiBaseURL)</string>
                <key>LogLevel</key><string>\(logLevel)</string>
                <key>ListenPort</key><integer>\(listenPort)</integer>
                <key>HeartbeatInterval</key><string>100ms</string>\(lines(moreCommon, depth: 2))
            </dict>
            <key>Staging</key>
            <dict>
                <key>APIHost</key><string>\(apiHost)</string>
            </dict>\(lines(moreSections, depth: 1))\(lines(secretsList, depth: 1))
            <key>RestartRequired</key>
            <array><string>ListenPort</string></array>
        """)
}
