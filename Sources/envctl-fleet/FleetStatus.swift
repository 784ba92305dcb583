#if Fleet
    import ArgumentParser
    import Environments
    import EnvironmentsControl
    import EtcdFleetClient
    import TextEscaping

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// `envctl fleet status`: which hosts run which revision of the fleet's documents, which
    /// rejected the newest and why, which have not renewed.
    struct FleetStatusCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show which hosts run the fleet's newest configuration, which rejected it and why.",
            discussion: """
                Reads the fleet's documents (their revision: the newest at which one was written; and their \
                fingerprint) and every host's status key, PREFIX/.status/HOST, which each daemon in fleet mode \
                keeps on an etcd lease: a host that stops renewing drops out after the lease's TTL (30 s by \
                default). A host runs the newest configuration when the documents it reports running have the \
                fingerprint of the documents in etcd now; while a staged publish is in progress (envctl publish --stage), \
                a host in its stage runs the newest when it runs the publish's candidate. A host is stale when it has not rewritten its status \
                for longer than its refresh interval and TTL together (90 s by default), or its key has no \
                lease. Each host is named by its key; a value whose own host member says otherwise is marked \
                "host differs". Exits with status 1 when some host does not run the newest configuration: it rejected \
                it (where and what kind of error is shown, never a value: the host's journal has the whole error), \
                reports an older one, or its status cannot be read.
                """)

        @OptionGroup var fleet: FleetOptions

        @Flag(help: "Print one JSON object instead of a table.")
        var json = false

        /// The most status keys read: 10,000 hosts (about 60 MiB of answer at 4 KiB each).
        static let maximumHosts = 10_000

        /// One host's line.
        struct HostRow: Encodable {
            /// The host, as its key names it (`PREFIX/.status/HOST`): what a host's credentials
            /// let it write, unlike the value's `host` member, which any writer can fill in.
            var host: String
            /// The status key.
            var key: String
            /// The value's own `host` member, when it differs from the key's: a value written
            /// under another host's key, or copied there.
            var claimedHost: String? = nil
            var revision: Int64?
            var fingerprint: String?
            var generation: UInt64?
            var environment: String?
            var last: FleetHostStatus.Change?
            var version: String?
            var library: String?
            var renewed: Date?
            var renewedSecondsAgo: Int?
            var ttl: Int?
            /// Whether it runs what it should: the documents in etcd now, or, in the stage of a staged
            /// publish, its candidate.
            var current: Bool
            /// Whether it is in the stage of the staged publish in progress.
            var staged: Bool = false
            /// Whether it has not renewed in time, or its key has no lease.
            var stale: Bool
            /// Why its value cannot be read, when it cannot.
            var unreadable: String?
        }

        /// The staged publish in progress.
        struct Rollout: Encodable {
            var id: String
            var stage: Int
            var steps: [String]
            var held: Bool
            /// The candidate's fingerprint.
            var fingerprint: String
            var startedBy: String
            var started: Date
        }

        struct Report: Encodable {
            var prefix: String
            var revision: Int64
            var fingerprint: String
            var rollout: Rollout?
            var hosts: [HostRow]
            /// How many hosts do not run the newest configuration.
            var behind: Int
            /// Whether more status keys exist than were read.
            var truncated: Bool
        }

        func run() throws {
            guard let configuration = try fleet.configuration() else {
                throw Failure("fleet status needs --etcd-endpoints (or $\(EtcdConfiguration.endpointsVariable))")
            }
            let report = try Self.report(configuration)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                encoder.dateEncodingStrategy = .iso8601
                print(ControlCharacters.escapedJSON(String(decoding: try encoder.encode(report), as: UTF8.self)))
            } else {
                Self.printTable(report)
            }
            if report.behind > 0 { throw ExitCode(1) }
        }

        /// The documents' revision and every host's status, read from etcd now.
        static func report(_ configuration: EtcdConfiguration, now: Date = Date()) throws -> Report {
            let state = try FleetOptions.read(configuration, acceptingViolation: true)
            let directory = FleetHostStatus.directory(prefix: configuration.prefix)
            let listing = try FleetOptions.blocking { client throws(EtcdError) in
                try await client.range(prefix: directory, limit: maximumHosts, maximumBytes: 64 << 20)
            }(configuration)
            let fingerprint = state.fingerprint
            let rollout = state.rollout
            /// What `host` should run: the candidate in a staged publish's stage, else the documents.
            func expected(_ host: String) -> (fingerprint: String, staged: Bool) {
                if let rollout, rollout.includes(host: host) { return (rollout.fingerprint, true) }
                return (fingerprint, false)
            }
            var rows: [HostRow] = []
            for keyValue in listing.keyValues {
                let name = String(keyValue.key.dropFirst(directory.count))
                guard let status = FleetHostStatus.decode(keyValue.value) else {
                    rows.append(
                        HostRow(
                            host: name, key: keyValue.key, current: false, stale: keyValue.lease == 0,
                            unreadable: keyValue.value.count > FleetHostStatus.maximumBytes
                                ? "larger than \(FleetHostStatus.maximumBytes) bytes" : "not a status of schema 1"))
                    continue
                }
                let age = Int(now.timeIntervalSince(status.renewed).rounded())
                let should = expected(name)
                rows.append(
                    HostRow(
                        host: name, key: keyValue.key, claimedHost: status.host == name ? nil : status.host,
                        revision: status.revision, fingerprint: status.fingerprint,
                        generation: status.generation, environment: status.environment, last: status.last,
                        version: status.version, library: status.library, renewed: status.renewed,
                        renewedSecondsAgo: age,
                        ttl: status.ttl, current: status.fingerprint == should.fingerprint, staged: should.staged,
                        stale: keyValue.lease == 0 || age > status.refresh + status.ttl))
            }
            return Report(
                prefix: configuration.prefix, revision: state.configurationRevision, fingerprint: fingerprint,
                rollout: rollout.map {
                    Rollout(
                        id: $0.id, stage: $0.stage + 1, steps: $0.steps.map(\.description), held: $0.held,
                        fingerprint: $0.fingerprint, startedBy: $0.startedBy, started: $0.started)
                }, hosts: rows,
                behind: rows.filter { !$0.current }.count, truncated: listing.more)
        }

        static func printTable(_ report: Report) {
            let running = report.hosts.count - report.behind
            printLine(
                "# fleet \(report.prefix) at revision \(report.revision) (fingerprint \(report.fingerprint)): "
                    + "\(report.hosts.count) host\(report.hosts.count == 1 ? "" : "s"), \(running) run\(running == 1 ? "s" : "") it, \(report.behind) do\(report.behind == 1 ? "es" : "") not"
            )
            if let rollout = report.rollout {
                let staged = report.hosts.filter(\.staged).count
                printLine(
                    "# staged publish \(rollout.id) by \(rollout.startedBy): stage \(rollout.stage) of \(rollout.steps.count) (\(rollout.steps[rollout.stage - 1]))\(rollout.held ? ", held" : ""); candidate fingerprint \(rollout.fingerprint), for the \(staged) host\(staged == 1 ? "" : "s") marked staged"
                )
            }
            if report.truncated { printLine("# more than \(maximumHosts) status keys: the first \(maximumHosts) only") }
            let header = ["HOST", "REVISION", "GENERATION", "LAST CHANGE", "VERSION", "RENEWED", "STATE"]
            var lines = [header]
            for row in report.hosts {
                let last = row.last.map { "\($0.outcomeWord) @\($0.revision)" } ?? "-"
                let version = [row.version, row.library.map { "lib \($0)" }].compactMap { $0 }.joined(separator: ", ")
                var state = row.current ? "current" : (row.unreadable != nil ? "unreadable" : "behind")
                if row.staged { state += ", staged" }
                if row.claimedHost != nil { state += ", host differs" }
                if row.stale { state += ", stale" }
                lines.append([
                    row.host, row.revision.map(String.init) ?? "-", row.generation.map(String.init) ?? "-", last,
                    version.isEmpty ? "-" : version, row.renewedSecondsAgo.map { "\($0) s ago" } ?? "-", state,
                ])
            }
            let widths = header.indices.map { column in lines.map { $0[column].count }.max() ?? 0 }
            for line in lines {
                printLine(
                    zip(line, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }.joined(
                        separator: "  "
                    )
                    .trimmingWhitespace())
            }
            for row in report.hosts {
                if let unreadable = row.unreadable { printLine("    \(row.host): status unreadable: \(unreadable)") }
                if let claimed = row.claimedHost {
                    printLine(
                        "    \(row.host): its status value says host '\(claimed)': written by another host, or copied (the key names the host)"
                    )
                }
                if let last = row.last, last.outcome == .rejected, let error = last.error {
                    printLine("    \(row.host) rejected revision \(last.revision): \(error)")
                }
            }
            if report.hosts.isEmpty { printLine("# no host reports under \(report.prefix).status/") }
        }
    }
#endif
