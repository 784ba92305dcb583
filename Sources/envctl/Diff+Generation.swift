import Environments
import EnvironmentsControl
import EnvironmentsEditing
import SystemdSupport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Diff {
    /// `--generation N`: the running daemon's generation `N` (left) and the one it runs now.
    func pastAndRunning(_ generation: Int) throws -> (String, [String: Side], String, [String: Side]) {
        let source = try ReloadHistorySource(location: location, unit: nil)
        guard let client = source.client else {
            throw Failure("no daemon to ask: pass --pid, --app-name or --socket")
        }
        let reply = try client.describe()
        var now: [String: Side] = [:]
        for setting in reply.settings {
            now[setting.key] = Side(
                display: setting.value ?? ConfiguredValue.redacted, comparable: setting.value,
                source: Listing.source(setting.source).description,
                notCompared: "secret: the history keeps no secret value, not compared")
        }
        let what = reply.instance.map { ", instance \($0)" } ?? ""
        let runningName =
            "running daemon (\(reply.applicationName), environment \(reply.environment)\(what), generation \(reply.generation))"
        guard generation <= reply.generation else {
            throw Failure("the daemon runs generation \(reply.generation): there is no generation \(generation) yet")
        }
        let (pastName, past) =
            try fromJournal(source, generation: generation)
            ?? fromDaemonHistory(source, generation: generation, now: now)
        return (pastName, past, runningName, now)
    }

    /// Generation `N` as the journal's entry for it has it (`CONFIG_SETTING`, the daemon's
    /// process and boot), or `nil` without one.
    private func fromJournal(_ source: ReloadHistorySource, generation: Int) throws -> (String, [String: Side])? {
        guard source.unit != nil, let pid = source.pid else { return nil }
        var matches: [String: [String]] = [
            "MESSAGE_ID": [ConfigurationMessageID.applied], "_SYSTEMD_UNIT": [source.unit!], "_PID": ["\(pid)"],
            "CONFIG_GENERATION": ["\(generation)"],
        ]
        if let boot = DaemonProcess.currentBootID {
            matches["_BOOT_ID"] = [boot.replacingEvery("-", with: "")]
        }
        let entries: [JournalReader.Entry]
        do {
            entries = try JournalReader.entries(matching: matches, limit: 1)
        } catch {
            return nil  // the daemon's history answers instead
        }
        guard let entry = entries.last else { return nil }
        let values = ReloadHistorySource.settings(entry.values("CONFIG_SETTING"))
        let sources = ReloadHistorySource.settings(entry.values("CONFIG_SETTING_SOURCE"))
        var sides: [String: Side] = [:]
        for (key, value) in values {
            let secret = value == ConfiguredValue.redacted
            sides[key] = Side(
                display: value, comparable: secret ? nil : value, source: sources[key] ?? "?",
                notCompared: "secret: the history keeps no secret value, not compared")
        }
        let time = Date(timeIntervalSince1970: Double(entry.realtimeMicroseconds) / 1_000_000)
        return ("generation \(generation) (from the journal, applied \(time.formatted(.iso8601)))", sides)
    }

    /// Generation `N` rebuilt from the running one and the daemon's history: each later
    /// applied reload's changes undone, newest first.
    private func fromDaemonHistory(_ source: ReloadHistorySource, generation: Int, now: [String: Side]) throws
        -> (String, [String: Side])
    {
        let history = try source.daemonHistory()
        guard
            let start = history.entries.firstIndex(where: {
                Int($0.generation) == generation && $0.outcome != .rejected
            })
        else {
            throw Failure(
                "generation \(generation) is older than the daemon's history (its last \(history.limit) loads and reloads) "
                    + "and the journal has no entry for it: envctl history lists the generations it knows")
        }
        var past = now
        for entry in history.entries[(start + 1)...].reversed() where entry.outcome == .applied {
            guard !entry.valuesOmitted, entry.changedKeys.count == entry.changedKeyCount else {
                throw Failure(
                    "generation \(entry.generation) changed more than the daemon's history keeps values of, "
                        + "so generation \(generation) cannot be rebuilt; the journal has it when the daemon runs under systemd"
                )
            }
            for change in entry.settingChanges {
                guard let previous = change.previous else {
                    past[change.key] = nil
                    continue
                }
                let secret = previous == ConfiguredValue.redacted
                past[change.key] = Side(
                    display: previous, comparable: secret ? nil : previous,
                    source: "before generation \(entry.generation)",
                    notCompared: "secret: the history keeps no secret value, not compared")
            }
        }
        // Keys no later change touched have their value now; a secret stays uncompared.
        return ("generation \(generation) (rebuilt from the running daemon's history)", past)
    }
}
