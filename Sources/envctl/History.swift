import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import TextEscaping
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a daemon's loads and reloads: applied, unchanged and rejected, with what changed and why.",
        discussion: """
            Each entry has its time, the generation in use afterwards, what started it (start, signal, \
            file change, a control call with its caller's uid, a fleet revision), the keys that changed \
            with their values before and after as show prints them (secrets <redacted>), and a rejection's \
            reason. envctl reads the entries the daemon wrote to the journal for its unit (--unit, else the \
            running daemon's, else --app-name's NAME.service), which outlive restarts; without any there \
            (no journal, or one this user may not read), it asks the running daemon, which keeps its last \
            100 in memory. --from chooses.
            """)

    @OptionGroup var location: LocationOptions

    @Option(help: "The systemd unit whose journal entries to read (default: the running daemon's, else NAME.service).")
    var unit: String?

    /// Where the entries come from.
    enum Origin: String, ExpressibleByArgument, CaseIterable {
        case auto, journal, daemon
    }

    @Option(help: "Read the journal, ask the daemon, or (auto) the journal when it has entries, else the daemon.")
    var from: Origin = .auto

    @Option(name: [.customShort("n"), .long], help: "List at most this many entries, the newest.")
    var lines = 100

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    func validate() throws {
        guard lines > 0 else { throw ValidationError("--lines must be at least 1") }
    }

    func run() throws {
        let source = try ReloadHistorySource(location: location, unit: unit)
        var entries: [ReloadReport] = []
        var origin = ""
        var note: String?
        if from != .daemon {
            entries = try source.journalEntries(limit: lines).compactMap(ReloadHistorySource.record)
            origin = "from the journal, unit \(source.unit ?? "?")"
            if entries.isEmpty {
                guard from == .auto else { throw Failure(source.emptyJournalNote) }
                note = source.emptyJournalNote
            }
        }
        if from == .daemon || entries.isEmpty {
            let reply = try source.daemonHistory()
            entries = Array(reply.entries.suffix(lines))
            let pid = source.pid.map { ", pid \($0)" } ?? ""
            origin =
                "from the running daemon\(pid): its last \(reply.limit) loads and reloads"
                + (reply.dropped > 0 ? " (\(reply.dropped) older ones dropped)" : "")
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            struct Output: Encodable {
                var readFrom: String
                /// In `HistoryEntry`'s form.
                var entries: [[String: JSONValue]]
            }
            let text = String(
                decoding: try encoder.encode(Output(readFrom: origin, entries: entries.map(\.historyJSON))),
                as: UTF8.self)
            print(ControlCharacters.escapedJSON(text))
            return
        }
        if let note { printLine("# \(note)") }
        printLine("# \(origin), oldest first")
        for entry in entries { Self.printEntry(entry, daemonUnit: source.unit) }
        if entries.isEmpty { printLine("# no entries") }
    }

    /// One entry as text: a line, then one line per changed key, or the rejection. A control
    /// call from `daemonUnit` (the daemon's own unit) was its `ExecReload=`.
    static func printEntry(_ entry: ReloadReport, daemonUnit: String?) {
        var line =
            "\(ReloadReport.timestamp(entry.finished))  generation \(entry.generation)  \(entry.outcome.wireName)"
        switch entry.outcome {
        case .loaded:
            line += " at start" + (entry.pid.map { ", pid \($0)" } ?? "")
            line += ", environment \(entry.environment)" + (entry.instance.map { ", instance \($0)" } ?? "")
        case .applied, .unchanged, .rejected, .abandoned:
            line += "  \(entry.triggerDescription(daemonUnit: daemonUnit))"
            if entry.outcome == .applied {
                line += entry.changedKeyCount == 1 ? ": 1 key changed" : ": \(entry.changedKeyCount) keys changed"
            }
        }
        printLine(line)
        for change in entry.settingChanges {
            if entry.valuesOmitted {
                printLine("    \(change.key)")
            } else {
                printLine("    \(change.key): \(change.previous ?? "<unset>") -> \(change.value ?? "<unset>")")
            }
        }
        if entry.valuesOmitted { printLine("    (values too large to keep in the daemon's history)") }
        if entry.changedKeys.count < entry.changedKeyCount {
            printLine("    ... and \(entry.changedKeyCount - entry.changedKeys.count) more keys")
        }
        if let error = entry.error { printLine("    \(error.description)") }
    }
}
