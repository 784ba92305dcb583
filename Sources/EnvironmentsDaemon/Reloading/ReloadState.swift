import Environments
package import EnvironmentsControl

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    package import Glibc
#elseif canImport(Musl)
    package import Musl
#elseif canImport(Darwin)
    package import Darwin
#endif

/// What a running daemon publishes in a file about its configuration and its last reload, for
/// scripts and monitoring that read files (the control socket answers the same questions).
///
/// The daemon rewrites the file atomically (write a temporary file, then rename it over) at
/// start and after every reload attempt (but one given up because the daemon stops).
/// ``LastReload/startedMonotonicMicroseconds`` tells a reader that signalled the daemon whether a
/// reload started after its signal.
package struct ReloadState: Codable, Sendable, Hashable {
    /// The daemon's process id.
    package var pid: Int32
    /// When the daemon started, in clock ticks since boot (`/proc/PID/stat`): with ``bootID``,
    /// what tells a reader that the daemon is gone even when its id was reused
    /// (`DaemonProcess/isRunning`).
    package var processStartTime: UInt64?
    /// The boot the daemon ran in (`/proc/sys/kernel/random/boot_id`).
    package var bootID: String?
    /// The application name (for `/etc/<name>/`).
    package var applicationName: String
    /// The selected environment.
    package var environment: String
    /// The selected instance, if any.
    package var instance: String?
    /// The explicitly selected configuration directory, if any, absolute (a relative
    /// `--config-dir` is made absolute at start, against the daemon's working directory).
    package var configDirectory: String?
    /// The directory the configuration was actually read from, absolute.
    package var resolvedDirectory: String?
    /// The generation of the configuration in use.
    package var generation: UInt64
    /// The files in use.
    package var files: [String]
    /// Restart-only keys whose new values wait for a restart.
    package var pendingRestart: [String]
    /// The last reload attempt, or `nil` before the first.
    package var lastReload: LastReload?
    /// The daemon's `$CREDENTIALS_DIRECTORY` (systemd's `LoadCredential=`), so that a reload
    /// command checks `${credential:...}` exactly as the daemon will: systemd 257 does not set
    /// the variable for `ExecReload=` commands (252 does).
    package var credentialsDirectory: String?
    /// For each key in ``pendingRestart``, the value the daemon still runs with (secrets
    /// redacted), so listings can show both.
    package var runningValues: [String: String]?

    /// The result of one reload attempt.
    package struct LastReload: Codable, Sendable, Hashable {
        /// What happened, as a verdict tells it: `applied`, `unchanged` or `rejected`
        /// (``ReloadOutcomeRecord/verdict``).
        package var outcome: ReloadOutcomeRecord
        /// `CLOCK_MONOTONIC` (µs) when the reload started reading files.
        package var startedMonotonicMicroseconds: UInt64
        /// `CLOCK_MONOTONIC` (µs) when it finished.
        package var finishedMonotonicMicroseconds: UInt64
        /// What triggered it: `signal`, `file`, `control`, `fleet`.
        package var trigger: String
        /// The generation in use afterwards.
        package var generation: UInt64
        /// The keys that changed, for an applied reload.
        package var changedKeys: [String]
        /// Why the configuration was rejected.
        package var error: String?
        /// The rejection's error code (`malformedFile`, `validationFailed`, ...).
        package var errorCode: String?
        /// The rejection's message, without file, line or hint.
        package var errorMessage: String?
        /// The key the rejection names, if any.
        package var errorKey: String?
        /// The file the rejection names, if any.
        package var errorFile: String?
        /// The line in ``errorFile``, where known.
        package var errorLine: Int?

        /// What `record`, a reload, says here and in the control socket's verdict: an
        /// abandoned reload is a rejected one whose error says the service is stopping.
        init(_ record: ReloadRecord) {
            outcome = record.outcome.verdict
            startedMonotonicMicroseconds = record.startedMonotonicMicroseconds
            finishedMonotonicMicroseconds = record.finishedMonotonicMicroseconds
            trigger = record.triggerName
            generation = record.generation
            changedKeys = record.changedKeys
            if record.outcome == .abandoned { error = record.abandonedReason }
            if let rejection = record.error {
                error = rejection.description
                errorCode = "\(rejection.code)"
                errorMessage = rejection.message
                errorKey = rejection.key
                errorFile = rejection.file
                errorLine = rejection.line
            }
        }
    }

    /// The state after `record`: its configuration, `lastReload` (the last reload, which is
    /// `record` unless it is the load at start), the options the daemon runs with and its
    /// `process`.
    init(_ record: ReloadRecord, lastReload: LastReload?, options: EnvironmentOptions?, process: DaemonProcess) {
        let snapshot = record.configuration
        pid = process.pid
        applicationName = options?.applicationName ?? "app"
        environment = snapshot.environmentName
        instance = snapshot.instanceName
        configDirectory = options?.configDirectory
        resolvedDirectory = snapshot.location?.directory
        generation = snapshot.generation
        files = snapshot.files
        pendingRestart = record.pendingRestartKeys
        self.lastReload = lastReload
        credentialsDirectory = options?.processEnvironment[EnvironmentOptions.credentialsDirectoryVariable]
        runningValues = snapshot.pendingRestart.keys.reduce(into: [:]) { values, key in
            values[key] = snapshot.configuredValue(forKey: key)?.displayValue() ?? "<unset>"
        }
        processStartTime = process.startTime
        bootID = process.bootID
    }

    /// The file name used in `$RUNTIME_DIRECTORY`.
    static let defaultFileName = DaemonProcess.stateFileName

    /// `$RUNTIME_DIRECTORY/environment-state.json` (systemd sets the variable from
    /// `RuntimeDirectory=`; with several directories, the first), or `nil` without it.
    package static func defaultPath(
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> String?
    {
        guard let runtime = processEnvironment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !runtime.isEmpty
        else {
            return nil
        }
        return PathNames.join(String(runtime), defaultFileName)
    }

    /// Reads a state file.
    package static func read(from path: String) throws -> ReloadState {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try JSONDecoder().decode(ReloadState.self, from: data)
    }

    /// The state file's permissions: read and write for the daemon's user alone, whatever the
    /// umask (a mode can only lose bits to it). The file names the last rejection's reason and
    /// the daemon's files; root and the daemon's user read it, as they may ask the control
    /// socket the same.
    package static let fileMode: mode_t = 0o600

    /// Removes the state file at `path` if this process wrote it (a daemon that started since
    /// keeps its own): on a clean stop, so that no file describes a daemon that is gone.
    package static func remove(at path: String) {
        guard let state = try? read(from: path), state.pid == getpid() else { return }
        unlink(path)
    }

    /// Writes the state atomically: a temporary file in the same directory renamed over `path`
    /// (no `fsync`: the file lives in the runtime directory and is rewritten on every reload),
    /// with ``fileMode``.
    package func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var text = try encoder.encode(self)
        text.append(UInt8(ascii: "\n"))
        try AtomicFile.replace(path, with: text, mode: Self.fileMode)
    }
}
