import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import SystemdSupport
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// Where `envctl history` and `envctl diff --generation` find a daemon's loads and reloads:
/// the journal entries the daemon wrote (they outlive it), else the daemon's own last ones
/// (its control socket's `History`).
struct ReloadHistorySource {
    /// The running daemon, when there is one.
    var client: VarlinkClient?
    /// Its process id, when known.
    var pid: Int32?
    /// The systemd unit whose journal entries are read: `--unit`, else the running daemon's
    /// (`/proc/PID/cgroup`), else `--app-name`'s (`NAME.service`, `NAME@INSTANCE.service`).
    var unit: String?

    /// The journal entries of configuration events.
    static let messageIDs = [
        ConfigurationMessageID.applied, ConfigurationMessageID.rejected, ConfigurationMessageID.unchanged,
    ]

    /// Finds the daemon (if one runs) and its unit.
    init(location: LocationOptions, unit: String?) throws {
        let environmentVariables = ProcessInfo.processInfo.environment
        if location.configDirectory != nil || location.environment != nil || !FleetTool.commandLine.etcd.isEmpty {
            throw Failure(
                "the history is a running daemon's: name it with --app-name, --pid or --socket (not --config-dir, --environment or etcd options)"
            )
        }
        let namesDaemon = location.pid != nil || location.socket != nil
        if namesDaemon || location.applicationName != nil || unit == nil {
            do {
                if case .daemon(let client) = try location.findTarget(requireDaemon: true) {
                    self.client = client
                    pid = location.daemonProcess(client)
                }
            } catch let failure as Failure {
                // --app-name or --unit alone: a daemon that is stopped still has its journal.
                if namesDaemon || (location.applicationName == nil && unit == nil) { throw failure }
            }
        }
        if let unit {
            self.unit = unit
        } else if let pid, let found = ServiceUnit.ofProcess(pid) {
            self.unit = found
        } else if let name = location.applicationName {
            let instance = location.selectedInstance(environmentVariables)?.name
            self.unit = instance.map { "\(name)@\($0).service" } ?? "\(name).service"
        }
    }

    /// The newest configuration entries of ``unit`` in the journal, oldest first (none
    /// without a unit).
    func journalEntries(limit: Int) throws -> [JournalReader.Entry] {
        guard let unit else { return [] }
        do {
            return try JournalReader.entries(
                matching: ["MESSAGE_ID": Self.messageIDs, "_SYSTEMD_UNIT": [unit]], limit: limit)
        } catch {
            throw Failure("\(error)")
        }
    }

    /// Why the journal had nothing, for a note: nothing was written there, or this user may
    /// not read it.
    var emptyJournalNote: String {
        guard let unit else {
            return "no journal to read: the daemon runs in no systemd service (--unit names one)"
        }
        let who =
            getuid() == 0
            ? "" : " (as uid \(getuid()): root and the systemd-journal and adm groups read the system's journal)"
        return "no configuration entries of \(unit) in the journal\(who)"
    }

    /// The daemon's own history.
    func daemonHistory() throws -> HistoryReply {
        guard let client else {
            throw Failure("no daemon to ask for its history: it is not running, or pass --pid, --app-name or --socket")
        }
        let reply: VarlinkReply
        do {
            reply = try client.call(VarlinkCall(method: ControlInterface.Method.history.qualifiedName))
        } catch {
            throw Failure("\(error)")
        }
        if let error = reply.error {
            if error == VarlinkServiceError.methodNotFound.qualifiedName {
                throw Failure("the daemon at \(client.path) keeps no history (an older version): read its journal")
            }
            throw Failure("the daemon answered \(error)")
        }
        do {
            return try JSONValue.record(HistoryReply.self, from: reply.parameters)
        } catch {
            throw Failure("the daemon's history cannot be read: \(error)")
        }
    }

    /// The record of a journal entry the daemon wrote; `nil` for another entry.
    static func record(_ entry: JournalReader.Entry) -> ReloadReport? {
        guard let id = entry.value("MESSAGE_ID"),
            let generation = entry.value("CONFIG_GENERATION").flatMap(UInt64.init),
            let environment = entry.value("CONFIG_ENVIRONMENT")
        else { return nil }
        let trigger = entry.value("CONFIG_TRIGGER")
        let changedKeys = entry.values("CONFIG_CHANGED_KEY").sorted()
        let outcome: ReloadReport.Outcome
        switch id {
        case ConfigurationMessageID.applied:
            // Before CONFIG_TRIGGER, a load at start was the entry without changed keys.
            let atStart =
                trigger == "start"
                || (trigger == nil && (entry.value("MESSAGE") ?? "").hasPrefix("Configuration loaded"))
            outcome = atStart ? .loaded : .applied
        case ConfigurationMessageID.rejected: outcome = .rejected
        case ConfigurationMessageID.unchanged: outcome = .unchanged
        default: return nil
        }
        var report = ReloadReport(
            outcome: outcome, trigger: trigger ?? (outcome == .loaded ? ReloadReport.startTrigger : "unknown"),
            revision: entry.value("CONFIG_FLEET_REVISION").flatMap(Int64.init), generation: generation,
            environment: environment, instance: entry.value("CONFIG_INSTANCE"),
            callerUID: entry.value("CONFIG_CALLER_UID").flatMap(UInt32.init),
            callerUnit: entry.value("CONFIG_CALLER_UNIT"),
            finished: Date(timeIntervalSince1970: Double(entry.realtimeMicroseconds) / 1_000_000),
            pid: entry.value("_PID").flatMap(Int32.init))
        if outcome == .applied {
            report.changedKeys = changedKeys
            report.changedKeyCount = changedKeys.count
            report.values = settings(entry.values("CONFIG_SETTING"), keys: changedKeys)
            report.previousValues = settings(entry.values("CONFIG_PREVIOUS_SETTING"), keys: changedKeys)
        }
        if outcome == .rejected, let description = entry.value("CONFIG_ERROR") {
            report.error = EnvironmentError(
                ConfigurationErrorRecord(
                    code: entry.value("CONFIG_ERROR_CODE") ?? "unknown", message: description, description: description,
                    key: entry.value("CONFIG_KEY"), file: entry.value("CONFIG_FILE"),
                    line: entry.value("CONFIG_LINE").flatMap(Int.init)))
        }
        return report
    }

    /// `Key=value` fields as a dictionary. A key is what comes before the first `=`, unless
    /// one of `keys` (which may hold `=`) is a longer prefix.
    static func settings(_ fields: [String], keys: [String] = []) -> [String: String] {
        let tricky = keys.filter { $0.contains("=") }
        var settings: [String: String] = [:]
        for field in fields {
            if let key = tricky.filter({ field.hasPrefix($0 + "=") }).max(by: { $0.count < $1.count }) {
                settings[key] = String(field.dropFirst(key.count + 1))
            } else if let equals = field.firstIndex(of: "=") {
                settings[String(field[..<equals])] = String(field[field.index(after: equals)...])
            }
        }
        return settings
    }
}
