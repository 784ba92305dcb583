package import Environments
package import JSONText
package import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The varlink interface a daemon built with Environments serves on its control socket.
///
/// Both sides use these records: the daemon (`EnvironmentsDaemon`) to answer, `envctl` to ask.
/// Any varlink client works too: `varlinkctl introspect SOCKET` prints ``description``,
/// `varlinkctl call --more SOCKET io.swiftenvironments.Configuration.Describe '{}'` calls a method.
package enum ControlInterface {
    /// The interface's name.
    package static let name = "io.swiftenvironments.Configuration"

    /// The file name of the control socket in the daemon's runtime directory.
    package static let socketFileName = "configuration.varlink"

    /// The interface's methods; `Tests/EnvironmentsControlTests` checks them against ``description``.
    package enum Method: String, CaseIterable, Sendable {
        case describe, get, check, reload, history, schema

        /// The name a call carries, for example `io.swiftenvironments.Configuration.Get`.
        package var qualifiedName: String { VarlinkName.qualified(rawValue, in: ControlInterface.name) }
    }

    /// The interface's own errors (beside `org.varlink.service`'s, ``VarlinkServiceError``).
    package enum Error: String, CaseIterable, Sendable {
        case noSuchSetting, permissionDenied, configurationRejected, reloadRejected, invalidMessage, tooManyConnections

        /// The name a reply carries, for example `io.swiftenvironments.Configuration.NoSuchSetting`.
        package var qualifiedName: String { VarlinkName.qualified(rawValue, in: ControlInterface.name) }
    }

    /// The interface description in varlink's interface definition language, as
    /// `org.varlink.service.GetInterfaceDescription` returns it.
    ///
    /// Written by hand beside the records below, which must match it field for field:
    /// `Tests/EnvironmentsControlTests` decodes objects made from this text into each record and
    /// encodes them back, and fails on any name, type, optionality or enum value that differs.
    package static let description = """
        # Ask a daemon built with swift-environments what configuration it runs with, check the
        # configuration on disk as a reload would, and reload it with the verdict as the answer.
        interface io.swiftenvironments.Configuration

        # Where an effective value came from.
        type Source (
          # defaults, common, environment, instance, environmentVariable or override
          layer: string,
          # The file that set it; absent for compiled-in defaults, overrides and built-in configuration.
          file: ?string,
          # Common, the environment's section, Instances.NAME, or the variable's name.
          section: ?string
        )

        # One effective setting.
        type Setting (
          # The dotted key path, for example Database.Host.
          key: string,
          # The value as text; absent when it is secret and secrets were not asked for.
          value: ?string,
          # string, integer, real, boolean, date, data, array or dictionary
          type: string,
          secret: bool,
          source: Source
        )

        # A restart-only setting whose new value waits for a restart.
        type PendingRestart (
          key: string,
          # The value the daemon runs with; absent when the key was not set before.
          running: ?Setting,
          # The value it takes after a restart.
          next: Setting
        )

        # Why a configuration was rejected.
        type ConfigurationError (
          # fileNotFound, malformedFile, unknownEnvironment, validationFailed, ...
          code: string,
          message: string,
          # The whole error on one line, with its hint.
          description: string,
          key: ?string,
          file: ?string,
          line: ?int
        )

        # The outcome of one reload.
        type ReloadVerdict (
          outcome: (applied, unchanged, rejected),
          # The environment in use afterwards.
          environment: string,
          # signal, file, control or fleet
          trigger: string,
          # The generation in use afterwards.
          generation: int,
          changedKeys: []string,
          error: ?ConfigurationError,
          startedMonotonicUSec: int,
          finishedMonotonicUSec: int
        )

        # A log level set with io.systemd.service.SetLogLevel, which wins over the setting
        # until the daemon restarts.
        type LogLevelOverride (
          # The key it overrides, LogLevel.
          key: string,
          # swift-log's level: critical, error, warning, notice, info or debug.
          level: string,
          # The BSD syslog level that was asked for, 0 to 7.
          syslogLevel: int,
          # Who set it.
          uid: int,
          # When, ISO 8601.
          setAt: string
        )

        # What the daemon runs with. Secret values need showSecrets, which only root and the
        # daemon's own user may ask for. Called with "more": true (envctl does; varlinkctl
        # call --more), the answer comes in parts of about 64 KiB, all from one generation:
        # the first has every field and the first settings; each later part has the same
        # applicationName, environment, instance, configDirectory, generation and loadedAt,
        # files empty, no lastReload, and the next settings, then the next pendingRestart
        # entries. Concatenate settings and pendingRestart over the parts. Without more, an
        # answer larger than one reply may be (1 MiB) is the error
        # org.varlink.service.ExpectedMore.
        method Describe(showSecrets: ?bool) -> (
          applicationName: string,
          environment: string,
          # The instance (a template unit's %i); absent for none.
          instance: ?string,
          # The directory the configuration files are read from, as an absolute path
          # (envctl set/unset/edit write there); absent without files.
          configDirectory: ?string,
          generation: int,
          files: []string,
          loadedAt: string,
          settings: []Setting,
          pendingRestart: []PendingRestart,
          lastReload: ?ReloadVerdict,
          # In the first part only.
          logLevelOverride: ?LogLevelOverride,
          # What loads but should be fixed (a key written twice in one dictionary), one line
          # each with its file and line; in the first part only, absent for none.
          warnings: ?[]string
        )

        # One effective setting; restartOnly: whether a change takes a restart (declared
        # restart-only, or listed in RestartRequired); pendingRestart: the value it takes after
        # a restart, when a reload changed it (absent for none).
        method Get(key: string, showSecrets: ?bool) -> (setting: Setting, restartOnly: ?bool, pendingRestart: ?Setting)

        # A file to check in place of the one on disk (or as a new drop-in): its path relative
        # to the configuration directory (Environments.plist or Environments.plist.d/NAME.plist)
        # and its whole text.
        type Candidate (path: string, contents: string)

        # Builds the configuration exactly as a reload would, the application's validation
        # included, without applying it; with candidates, as if they were installed (what
        # envctl edit and set check before they install a file). Root and the daemon's own
        # user only.
        method Check(candidates: ?[]Candidate) -> (
          environment: string, generation: int, changedKeys: []string, pendingRestart: []string,
          # As in Describe: what the checked configuration should fix; absent for none.
          warnings: ?[]string
        )

        # Reloads and answers with the verdict; a rejected configuration is the error
        # ReloadRejected, and the daemon keeps its last good configuration. Root and the
        # daemon's own user only.
        method Reload() -> (verdict: ReloadVerdict)

        # One changed key: its value before and after, as envctl show prints them (secrets
        # <redacted>); absent where the key was not set, or with valuesOmitted.
        type SettingChange (key: string, previous: ?string, value: ?string)

        # One load or reload attempt.
        type HistoryEntry (
          # When it finished, ISO 8601, UTC.
          time: string,
          outcome: (loaded, applied, unchanged, rejected),
          # The generation in use afterwards (rejected: the one kept).
          generation: int,
          environment: string,
          instance: ?string,
          # start, signal, file, control (a control call, or the application) or fleet
          trigger: string,
          # A control call's caller.
          callerUID: ?int,
          # The systemd service unit the caller runs in (the daemon's own: its ExecReload=).
          callerUnit: ?string,
          # A fleet change's etcd revision.
          fleetRevision: ?int,
          # In key order; fewer than changedKeyCount when too many to keep.
          changes: []SettingChange,
          changedKeyCount: int,
          # The changes' values were too large to keep: only their keys are listed.
          valuesOmitted: bool,
          error: ?ConfigurationError,
          pid: ?int
        )

        # The daemon's last loads and reloads, oldest first: at most limit (100) entries in
        # at most 768 KiB, so that the answer is one reply; dropped counts the older ones it no
        # longer has. The journal keeps them longer (envctl history reads it first).
        method History() -> (entries: []HistoryEntry, limit: int, dropped: int)

        # The settings the application declares, as a JSON Schema (draft 2020-12) document of
        # the effective configuration, with annotations of our own (x-secret, x-restart-only,
        # x-former-names, x-required-in); envctl schema prints it, envctl check --schema reads
        # it. It holds no values. Without a declaration, a schema with no properties and
        # declared false.
        method Schema() -> (schema: string, declared: bool)

        error NoSuchSetting (key: string)
        error PermissionDenied (method: string, uid: int, reason: string)
        error ConfigurationRejected (error: ConfigurationError)
        error ReloadRejected (verdict: ReloadVerdict)
        error InvalidMessage (reason: string)
        # Sent instead of a reply to a connection the daemon does not take: too many are
        # open, from this user or in all.
        error TooManyConnections (reason: string)
        """
}

/// The output of `Schema`.
package struct SchemaReply: Codable, Sendable, Hashable {
    /// The JSON Schema document's text.
    package var schema: String
    /// Whether the application declares its settings.
    package var declared: Bool

    package init(schema: String, declared: Bool) {
        self.schema = schema
        self.declared = declared
    }
}

/// `Source` in the interface.
package struct SourceRecord: Codable, Sendable, Hashable {
    package var layer: String
    package var file: String?
    package var section: String?

    package init(layer: String, file: String?, section: String?) {
        self.layer = layer
        self.file = file
        self.section = section
    }
}

/// `Setting` in the interface.
package struct SettingRecord: Codable, Sendable, Hashable {
    package var key: String
    package var value: String?
    package var type: String
    package var secret: Bool
    package var source: SourceRecord

    package init(key: String, value: String?, type: String, secret: Bool, source: SourceRecord) {
        self.key = key
        self.value = value
        self.type = type
        self.secret = secret
        self.source = source
    }
}

extension SourceRecord {
    /// The record as JSON, as `JSONValueEncoder` makes it, without its reflection (a long
    /// `Describe` encodes one per setting).
    package var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["layer": .string(layer)]
        if let file { members["file"] = .string(file) }
        if let section { members["section"] = .string(section) }
        return .object(members)
    }
}

extension SettingRecord {
    /// The record as JSON, as `JSONValueEncoder` makes it, without its reflection.
    package var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "key": .string(key), "type": .string(type), "secret": .bool(secret), "source": source.jsonValue,
        ]
        if let value { members["value"] = .string(value) }
        return .object(members)
    }
}

extension PendingRestartRecord {
    /// The record as JSON, as `JSONValueEncoder` makes it, without its reflection.
    package var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["key": .string(key), "next": next.jsonValue]
        if let running { members["running"] = running.jsonValue }
        return .object(members)
    }
}

/// `PendingRestart` in the interface.
package struct PendingRestartRecord: Codable, Sendable, Hashable {
    package var key: String
    package var running: SettingRecord?
    package var next: SettingRecord

    package init(key: String, running: SettingRecord?, next: SettingRecord) {
        self.key = key
        self.running = running
        self.next = next
    }
}

/// `ConfigurationError` in the interface.
package struct ConfigurationErrorRecord: Codable, Sendable, Hashable {
    package var code: String
    package var message: String
    package var description: String
    package var key: String?
    package var file: String?
    package var line: Int?

    package init(code: String, message: String, description: String, key: String?, file: String?, line: Int?) {
        self.code = code
        self.message = message
        self.description = description
        self.key = key
        self.file = file
        self.line = line
    }
}

/// `LogLevelOverride` in the interface.
package struct LogLevelOverrideRecord: Codable, Sendable, Hashable {
    package var key: String
    package var level: String
    package var syslogLevel: Int
    package var uid: Int
    package var setAt: String

    package init(key: String, level: String, syslogLevel: Int, uid: Int, setAt: String) {
        self.key = key
        self.level = level
        self.syslogLevel = syslogLevel
        self.uid = uid
        self.setAt = setAt
    }
}

/// The output of `Describe`.
package struct DescribeReply: Codable, Sendable, Hashable {
    package var applicationName: String
    package var environment: String
    package var instance: String?
    package var configDirectory: String?
    package var generation: Int
    package var files: [String]
    package var loadedAt: String
    package var settings: [SettingRecord]
    package var pendingRestart: [PendingRestartRecord]
    /// In `ReloadVerdict`'s form (`ReloadReport/verdictJSON`).
    package var lastReload: ReloadReport?
    package var logLevelOverride: LogLevelOverrideRecord?
    /// In the first part only; `nil` for none.
    package var warnings: [String]?

    package init(
        applicationName: String, environment: String, instance: String? = nil, configDirectory: String? = nil,
        generation: Int, files: [String],
        loadedAt: String, settings: [SettingRecord], pendingRestart: [PendingRestartRecord],
        lastReload: ReloadReport?
    ) {
        self.applicationName = applicationName
        self.environment = environment
        self.instance = instance
        self.configDirectory = configDirectory
        self.generation = generation
        self.files = files
        self.loadedAt = loadedAt
        self.settings = settings
        self.pendingRestart = pendingRestart
        self.lastReload = lastReload
    }
}

extension DescribeReply {
    private enum CodingKeys: String, CodingKey {
        case applicationName, environment, instance, configDirectory, generation, files, loadedAt, settings
        case pendingRestart, lastReload, logLevelOverride, warnings
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            applicationName: try container.decode(String.self, forKey: .applicationName),
            environment: try container.decode(String.self, forKey: .environment),
            instance: try container.decodeIfPresent(String.self, forKey: .instance),
            configDirectory: try container.decodeIfPresent(String.self, forKey: .configDirectory),
            generation: try container.decode(Int.self, forKey: .generation),
            files: try container.decode([String].self, forKey: .files),
            loadedAt: try container.decode(String.self, forKey: .loadedAt),
            settings: try container.decode([SettingRecord].self, forKey: .settings),
            pendingRestart: try container.decode([PendingRestartRecord].self, forKey: .pendingRestart),
            lastReload: try container.decodeIfPresent([String: JSONValue].self, forKey: .lastReload).map {
                try ReloadReport(verdict: $0)
            })
        logLevelOverride = try container.decodeIfPresent(LogLevelOverrideRecord.self, forKey: .logLevelOverride)
        warnings = try container.decodeIfPresent([String].self, forKey: .warnings)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(applicationName, forKey: .applicationName)
        try container.encode(environment, forKey: .environment)
        try container.encodeIfPresent(instance, forKey: .instance)
        try container.encodeIfPresent(configDirectory, forKey: .configDirectory)
        try container.encode(generation, forKey: .generation)
        try container.encode(files, forKey: .files)
        try container.encode(loadedAt, forKey: .loadedAt)
        try container.encode(settings, forKey: .settings)
        try container.encode(pendingRestart, forKey: .pendingRestart)
        try container.encodeIfPresent(lastReload?.verdictJSON, forKey: .lastReload)
        try container.encodeIfPresent(logLevelOverride, forKey: .logLevelOverride)
        try container.encodeIfPresent(warnings, forKey: .warnings)
    }

    /// Adds a later part of a `Describe` called with `more`: its settings and restart-only keys.
    ///
    /// - Throws: When the part is from another generation or environment than the first.
    package mutating func append(part: DescribeReply) throws(VarlinkClientError) {
        guard part.generation == generation, part.environment == environment else {
            throw VarlinkClientError(
                "the daemon's description changed between its parts (generation \(generation), then \(part.generation))"
            )
        }
        settings += part.settings
        pendingRestart += part.pendingRestart
    }
}

/// The output of `Check`.
package struct CheckReply: Codable, Sendable, Hashable {
    package var environment: String
    package var generation: Int
    package var changedKeys: [String]
    package var pendingRestart: [String]
    /// `nil` for none.
    package var warnings: [String]?

    package init(
        environment: String, generation: Int, changedKeys: [String], pendingRestart: [String],
        warnings: [String]? = nil
    ) {
        self.environment = environment
        self.generation = generation
        self.changedKeys = changedKeys
        self.pendingRestart = pendingRestart
        self.warnings = warnings
    }
}

extension VarlinkReply {
    /// An error reply of the control interface with `parameters`.
    package static func error(
        _ error: ControlInterface.Error, _ parameters: [String: JSONValue] = [:]
    ) -> VarlinkReply {
        VarlinkReply(parameters: parameters, error: error.qualifiedName)
    }
}
