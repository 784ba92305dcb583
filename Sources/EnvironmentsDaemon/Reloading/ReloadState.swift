package import Environments
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
/// `lastReload.startedMonotonicMicroseconds` tells a reader that signalled the daemon whether a
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
    /// The last reload attempt, or `nil` before the first, in the state file's form
    /// (`ReloadReport/encodeStateFileForm(to:)`).
    package var lastReload: ReloadReport?
    /// The daemon's `$CREDENTIALS_DIRECTORY` (systemd's `LoadCredential=`), so that a reload
    /// command checks `${credential:...}` exactly as the daemon will: systemd 257 does not set
    /// the variable for `ExecReload=` commands (252 does).
    package var credentialsDirectory: String?
    /// For each key in ``pendingRestart``, the value the daemon still runs with (secrets
    /// redacted), so listings can show both.
    package var runningValues: [String: String]?

    /// The state after `report`: `snapshot`, the configuration in use, `lastReload` (the last
    /// reload, which is `report` unless it is the load at start), the options the daemon runs
    /// with and its `process`.
    package init(
        _ report: ReloadReport, configuration snapshot: EnvironmentSnapshot, lastReload: ReloadReport?,
        options: EnvironmentOptions?, process: DaemonProcess
    ) {
        pid = process.pid
        applicationName = options?.applicationName ?? "app"
        environment = report.environment
        instance = report.instance
        configDirectory = options?.configDirectory
        resolvedDirectory = snapshot.location?.directory
        generation = report.generation
        files = snapshot.files
        pendingRestart = report.pendingRestart
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

extension ReloadState {
    private enum CodingKeys: String, CodingKey {
        case pid, processStartTime, bootID, applicationName, environment, instance, configDirectory
        case resolvedDirectory, generation, files, pendingRestart, lastReload, credentialsDirectory, runningValues
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pid = try container.decode(Int32.self, forKey: .pid)
        processStartTime = try container.decodeIfPresent(UInt64.self, forKey: .processStartTime)
        bootID = try container.decodeIfPresent(String.self, forKey: .bootID)
        applicationName = try container.decode(String.self, forKey: .applicationName)
        environment = try container.decode(String.self, forKey: .environment)
        instance = try container.decodeIfPresent(String.self, forKey: .instance)
        configDirectory = try container.decodeIfPresent(String.self, forKey: .configDirectory)
        resolvedDirectory = try container.decodeIfPresent(String.self, forKey: .resolvedDirectory)
        generation = try container.decode(UInt64.self, forKey: .generation)
        files = try container.decode([String].self, forKey: .files)
        pendingRestart = try container.decode([String].self, forKey: .pendingRestart)
        lastReload =
            try container.contains(.lastReload) && !container.decodeNil(forKey: .lastReload)
            ? ReloadReport(
                stateFileForm: try container.nestedContainer(
                    keyedBy: ReloadReport.StateFileKey.self, forKey: .lastReload),
                environment: environment, instance: instance) : nil
        credentialsDirectory = try container.decodeIfPresent(String.self, forKey: .credentialsDirectory)
        runningValues = try container.decodeIfPresent([String: String].self, forKey: .runningValues)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(pid, forKey: .pid)
        try container.encodeIfPresent(processStartTime, forKey: .processStartTime)
        try container.encodeIfPresent(bootID, forKey: .bootID)
        try container.encode(applicationName, forKey: .applicationName)
        try container.encode(environment, forKey: .environment)
        try container.encodeIfPresent(instance, forKey: .instance)
        try container.encodeIfPresent(configDirectory, forKey: .configDirectory)
        try container.encodeIfPresent(resolvedDirectory, forKey: .resolvedDirectory)
        try container.encode(generation, forKey: .generation)
        try container.encode(files, forKey: .files)
        try container.encode(pendingRestart, forKey: .pendingRestart)
        if let lastReload {
            var nested = container.nestedContainer(keyedBy: ReloadReport.StateFileKey.self, forKey: .lastReload)
            try lastReload.encodeStateFileForm(to: &nested)
        }
        try container.encodeIfPresent(credentialsDirectory, forKey: .credentialsDirectory)
        try container.encodeIfPresent(runningValues, forKey: .runningValues)
    }
}

/// The state file's form of a reload, `lastReload`: what it came to as a verdict tells it
/// (`ReloadReport/verdict`), its monotonic times, trigger, generation and changed keys, and a
/// rejection's error in six members (an abandoned reload's: `error` alone). Scripts and other
/// versions read it, so its members never change.
extension ReloadReport {
    package enum StateFileKey: String, CodingKey {
        case outcome, startedMonotonicMicroseconds, finishedMonotonicMicroseconds, trigger, generation, changedKeys
        case error, errorCode, errorMessage, errorKey, errorFile, errorLine
    }

    /// Writes the state file's `lastReload` members.
    package func encodeStateFileForm(to container: inout KeyedEncodingContainer<StateFileKey>) throws {
        try container.encode(verdict.wireName, forKey: .outcome)
        try container.encode(startedMonotonicMicroseconds, forKey: .startedMonotonicMicroseconds)
        try container.encode(finishedMonotonicMicroseconds, forKey: .finishedMonotonicMicroseconds)
        try container.encode(trigger, forKey: .trigger)
        try container.encode(generation, forKey: .generation)
        try container.encode(changedKeys, forKey: .changedKeys)
        if outcome == .abandoned { try container.encode(abandonedReason, forKey: .error) }
        guard let error, outcome != .abandoned else { return }
        try container.encode(error.description, forKey: .error)
        try container.encode("\(error.code)", forKey: .errorCode)
        try container.encode(error.message, forKey: .errorMessage)
        try container.encodeIfPresent(error.key, forKey: .errorKey)
        try container.encodeIfPresent(error.file, forKey: .errorFile)
        try container.encodeIfPresent(error.line, forKey: .errorLine)
    }

    /// The reload a state file's `lastReload` tells of, in a daemon that runs `environment`
    /// (and `instance`). A rejection without an error code is an abandoned reload's.
    package init(
        stateFileForm container: KeyedDecodingContainer<StateFileKey>, environment: String, instance: String?
    ) throws {
        let word = try container.decode(String.self, forKey: .outcome)
        guard var outcome = Outcome(wireName: word) else {
            throw DecodingError.dataCorruptedError(
                forKey: .outcome, in: container, debugDescription: "lastReload.outcome is '\(word)'")
        }
        let description = try container.decodeIfPresent(String.self, forKey: .error)
        var error: EnvironmentError?
        if let description, let code = try container.decodeIfPresent(String.self, forKey: .errorCode) {
            error = EnvironmentError(
                .init(named: code), try container.decodeIfPresent(String.self, forKey: .errorMessage) ?? description,
                key: try container.decodeIfPresent(String.self, forKey: .errorKey),
                file: try container.decodeIfPresent(String.self, forKey: .errorFile),
                line: try container.decodeIfPresent(Int.self, forKey: .errorLine))
            error?.toldDescription = description
        } else if outcome == .rejected, description != nil {
            outcome = .abandoned
        }
        self.init(
            outcome: outcome, trigger: try container.decode(String.self, forKey: .trigger),
            generation: try container.decode(UInt64.self, forKey: .generation), environment: environment,
            error: error, instance: instance, changedKeys: try container.decode([String].self, forKey: .changedKeys),
            startedMonotonicMicroseconds: try container.decode(UInt64.self, forKey: .startedMonotonicMicroseconds),
            finishedMonotonicMicroseconds: try container.decode(UInt64.self, forKey: .finishedMonotonicMicroseconds))
    }
}
