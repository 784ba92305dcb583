import Environments
import EnvironmentsControl
import Foundation

/// What a running daemon publishes in a file about its configuration and its last reload, for
/// scripts and monitoring that read files (the control socket answers the same questions).
///
/// The daemon rewrites the file atomically (write a temporary file, then rename it over) at
/// start and after every reload attempt. ``LastReload/startedMonotonicMicroseconds`` tells a
/// reader that signalled the daemon whether a reload started after its signal.
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
        /// What happened.
        package enum Outcome: String, Codable, Sendable {
            /// A new configuration was applied.
            case applied
            /// The configuration was unchanged.
            case unchanged
            /// The new configuration was rejected; the old one stays.
            case rejected
        }
        /// What happened.
        package var outcome: Outcome
        /// `CLOCK_MONOTONIC` (µs) when the reload started reading files.
        package var startedMonotonicMicroseconds: UInt64
        /// `CLOCK_MONOTONIC` (µs) when it finished.
        package var finishedMonotonicMicroseconds: UInt64
        /// What triggered it: `signal`, `file-change`, `api`.
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

        /// Creates a record.
        package init(
            outcome: Outcome, startedMonotonicMicroseconds: UInt64, finishedMonotonicMicroseconds: UInt64,
            trigger: String, generation: UInt64, changedKeys: [String] = [], error: String? = nil
        ) {
            self.outcome = outcome
            self.startedMonotonicMicroseconds = startedMonotonicMicroseconds
            self.finishedMonotonicMicroseconds = finishedMonotonicMicroseconds
            self.trigger = trigger
            self.generation = generation
            self.changedKeys = changedKeys
            self.error = error
        }

        /// A record of a rejected reload, with the details of `error`.
        package init(
            rejectedWith error: EnvironmentError, startedMonotonicMicroseconds: UInt64,
            finishedMonotonicMicroseconds: UInt64, trigger: String, generation: UInt64
        ) {
            self.init(
                outcome: .rejected, startedMonotonicMicroseconds: startedMonotonicMicroseconds,
                finishedMonotonicMicroseconds: finishedMonotonicMicroseconds, trigger: trigger, generation: generation,
                error: error.description)
            errorCode = "\(error.code)"
            errorMessage = error.message
            errorKey = error.key
            errorFile = error.file
            errorLine = error.line
        }
    }

    /// Creates a state.
    package init(
        pid: Int32, applicationName: String, environment: String, configDirectory: String?, resolvedDirectory: String?,
        generation: UInt64, files: [String], pendingRestart: [String], lastReload: LastReload? = nil,
        credentialsDirectory: String? = nil, runningValues: [String: String]? = nil
    ) {
        self.pid = pid
        self.applicationName = applicationName
        self.environment = environment
        self.configDirectory = configDirectory
        self.resolvedDirectory = resolvedDirectory
        self.generation = generation
        self.files = files
        self.pendingRestart = pendingRestart
        self.lastReload = lastReload
        self.credentialsDirectory = credentialsDirectory
        self.runningValues = runningValues
    }

    /// The file name used in `$RUNTIME_DIRECTORY`.
    package static let defaultFileName = DaemonProcess.stateFileName

    /// `$RUNTIME_DIRECTORY/environment-state.json` (systemd sets the variable from
    /// `RuntimeDirectory=`; with several directories, the first), or `nil` without it.
    package static func defaultPath(processEnvironment: [String: String] = ProcessInfo.processInfo.environment)
        -> String?
    {
        guard let runtime = processEnvironment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !runtime.isEmpty
        else {
            return nil
        }
        return (String(runtime) as NSString).appendingPathComponent(defaultFileName)
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
