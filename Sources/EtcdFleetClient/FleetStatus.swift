#if Fleet
    package import Environments
    import EnvironmentsControl

    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// What one daemon of a fleet reports about itself under `PREFIX/.status/HOST`: the revision
    /// of the fleet's documents its configuration was built from, the outcome of the last fleet
    /// change it saw, its versions, and when it last rewrote the report.
    ///
    /// The key is attached to a lease the daemon renews every third of its TTL: a host that
    /// dies, or loses etcd for longer than the TTL, drops out on its own. The value is a JSON
    /// object of at most ``maximumBytes`` bytes, with these members (`schema` 1):
    ///
    /// | member | meaning |
    /// |---|---|
    /// | `schema` | 1 |
    /// | `host` | the host id: `/etc/machine-id`, with `@INSTANCE` when one host runs several daemons of the fleet |
    /// | `revision` | the fleet revision of the configuration in use (``FleetState/configurationRevision``); 0 before any |
    /// | `fingerprint` | the fingerprint of those documents (``FleetState/fingerprint``) |
    /// | `generation` | the configuration's generation on this host |
    /// | `environment` | the environment the daemon runs |
    /// | `last` | the last fleet change (``Change``, made of a `ReloadReport`): `outcome` (`applied`, `unchanged`, `pending-restart`, `rejected`), its `revision` and `fingerprint`, `error` (rejected only; where and what kind, never a message or a value: ``FleetRejection``; at most 1 KiB), `at` |
    /// | `version`, `library` | the application's version (when it gives one) and this library's |
    /// | `renewed` | when the value was last written |
    /// | `ttl`, `refresh` | the lease's TTL and how often the value is rewritten, in seconds |
    package struct FleetHostStatus: Codable, Sendable, Hashable {
        /// The last fleet change a host saw: the fleet's form of a `ReloadReport`.
        package struct Change: Codable, Sendable, Hashable {
            /// What it came to, as a verdict tells it: `applied`, `unchanged` or `rejected` (the
            /// host keeps its last good configuration).
            package var outcome: ReloadReport.Outcome
            /// Whether restart-only settings wait for a restart after it was applied: the value
            /// says `pending-restart` then, where it would say `applied`.
            package var waitsForRestart: Bool
            /// Its fleet revision.
            package var revision: Int64
            /// Its documents' fingerprint.
            package var fingerprint: String
            /// Why it was rejected: a ``FleetRejection`` as text, at most
            /// ``FleetHostStatus/maximumErrorBytes``. Set only from a ``FleetRejection`` (or decoded
            /// from another host's value), so that no message can reach it.
            package private(set) var error: String?
            /// When the host judged it.
            package var at: Date

            /// The change `outcome`, with its `rejection` for a rejected one.
            package init(
                outcome: ReloadReport.Outcome, waitsForRestart: Bool = false, revision: Int64, fingerprint: String,
                rejection: FleetRejection?, at: Date
            ) {
                self.outcome = outcome
                self.waitsForRestart = waitsForRestart
                self.revision = revision
                self.fingerprint = fingerprint
                self.error = rejection.map {
                    FleetHostStatus.truncated($0.description, to: FleetHostStatus.maximumErrorBytes)
                }
                self.at = at
            }

            /// The fleet change that `report` tells of, judged at `at`, of the documents of `revision`
            /// and `fingerprint`; `nil` when `report` is of no change of the source named `source`
            /// (another trigger, or no revision given). Its outcome as a verdict tells it (the load
            /// at start reads `applied`, an abandoned reload `rejected`), `pending-restart` when
            /// applied with keys waiting for a restart, and a rejection's ``FleetRejection``
            /// (never its message). The report's other fields are not shown here:
            /// `ReloadReportSurfaceTests` lists them.
            package init?(_ report: ReloadReport, of source: String, revision: Int64, fingerprint: String, at: Date) {
                guard report.trigger == source, report.revision != nil else { return nil }
                let rejected = report.verdict == .rejected
                self.init(
                    outcome: report.verdict,
                    waitsForRestart: report.verdict == .applied && !report.pendingRestart.isEmpty,
                    revision: revision, fingerprint: fingerprint,
                    rejection: rejected ? report.error.map(FleetRejection.init) ?? .abandoned : nil, at: at)
            }

            /// The outcome's word in the value: `applied`, `unchanged`, `pending-restart` or
            /// `rejected`.
            package var outcomeWord: String { waitsForRestart ? Self.pendingRestartWord : outcome.wireName }

            private static let pendingRestartWord = "pending-restart"

            private enum CodingKeys: String, CodingKey {
                case outcome, revision, fingerprint, error, at
            }

            package init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                let word = try container.decode(String.self, forKey: .outcome)
                waitsForRestart = word == Self.pendingRestartWord
                guard let outcome = waitsForRestart ? .applied : ReloadReport.Outcome(wireName: word) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .outcome, in: container, debugDescription: "last.outcome is '\(word)'")
                }
                self.outcome = outcome
                revision = try container.decode(Int64.self, forKey: .revision)
                fingerprint = try container.decode(String.self, forKey: .fingerprint)
                error = try container.decodeIfPresent(String.self, forKey: .error)
                at = try container.decode(Date.self, forKey: .at)
            }

            package func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(outcomeWord, forKey: .outcome)
                try container.encode(revision, forKey: .revision)
                try container.encode(fingerprint, forKey: .fingerprint)
                try container.encodeIfPresent(error, forKey: .error)
                try container.encode(at, forKey: .at)
            }

            /// Cuts ``error`` to at most `bytes` UTF-8 bytes.
            mutating func cutError(to bytes: Int) {
                error = error.map { FleetHostStatus.truncated($0, to: bytes) }
            }
        }

        /// The format of the value.
        package var schema = 1
        /// The host id (``FleetStatusOptions/hostID``).
        package var host: String
        /// The fleet revision of the configuration in use.
        package var revision: Int64
        /// Its documents' fingerprint.
        package var fingerprint: String
        /// The configuration's generation on the host.
        package var generation: UInt64
        /// The environment the host runs.
        package var environment: String
        /// The last fleet change the host saw, `nil` before the first (the configuration at start
        /// came from the documents ``revision`` names).
        package var last: Change?
        /// The application's version, when it gives one.
        package var version: String?
        /// The library's version.
        package var library: String
        /// When the value was written.
        package var renewed: Date
        /// The lease's TTL, in seconds.
        package var ttl: Int
        /// How often the value is rewritten when nothing changes, in seconds.
        package var refresh: Int

        package init(
            host: String, revision: Int64, fingerprint: String, generation: UInt64, environment: String, last: Change?,
            version: String?, library: String = LibraryVersion.current, renewed: Date, ttl: Int, refresh: Int
        ) {
            self.host = host
            self.revision = revision
            self.fingerprint = fingerprint
            self.generation = generation
            self.environment = environment
            self.last = last
            self.version = version.map { Self.truncated($0, to: 64) }
            self.library = library
            self.renewed = renewed
            self.ttl = ttl
            self.refresh = refresh
        }

        /// The status after `report`: the configuration's generation and environment, built from the
        /// documents of `running`; `last`, the last fleet change (``Change``, of `report` when it is one).
        package init(
            after report: ReloadReport, host: String, running: (revision: Int64, fingerprint: String), last: Change?,
            version: String?, renewed: Date, ttl: Int, refresh: Int
        ) {
            self.init(
                host: host, revision: running.revision, fingerprint: running.fingerprint, generation: report.generation,
                environment: report.environment, last: last, version: version, renewed: renewed, ttl: ttl,
                refresh: refresh)
        }

        /// The most bytes of a status value: 4 KiB.
        package static let maximumBytes = 4096
        /// The most bytes of the error text in it: 1 KiB, cut at a character with `…`.
        package static let maximumErrorBytes = 1024

        /// The status keys' directory: `PREFIX/.status/`. It sorts before `PREFIX/Environments.plist`
        /// and is no document's key, so a daemon never lists, reads or watches it as configuration,
        /// and `envctl publish`'s comparisons (the main document and the drop-in directory) never
        /// cover it.
        package static func directory(prefix: String) -> String { prefix + ".status/" }

        /// The host's status key: `PREFIX/.status/HOST`.
        package static func key(prefix: String, host: String) -> String { directory(prefix: prefix) + host }

        /// Whether `host` may name a status key: 1 to 128 characters among `A-Z a-z 0-9 . _ - @ :`,
        /// not starting with `.`.
        package static func isValidHostID(_ host: String) -> Bool {
            guard (1...128).contains(host.utf8.count), !host.hasPrefix(".") else { return false }
            return host.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array(".-_@:".utf8).contains(byte)
            }
        }

        /// The JSON value, at most ``maximumBytes``: the error text is cut further if need be.
        package func encoded() -> Data {
            var status = self
            while true {
                let data = FleetJSON.encode(status) ?? Data()
                guard data.count > Self.maximumBytes, let error = status.last?.error, !error.isEmpty else {
                    return data
                }
                status.last?.cutError(to: max(0, error.utf8.count - (data.count - Self.maximumBytes) - 8))
            }
        }

        /// The status a value holds, or `nil` when it is not one (too large, not JSON, another schema).
        package static func decode(_ data: Data) -> FleetHostStatus? {
            guard let status = FleetJSON.decode(FleetHostStatus.self, from: data, maximumBytes: maximumBytes),
                status.schema == 1
            else { return nil }
            return status
        }

        /// `text` cut to at most `bytes` UTF-8 bytes, at a character boundary, ending in `…` when cut.
        package static func truncated(_ text: String, to bytes: Int) -> String {
            guard text.utf8.count > bytes else { return text }
            var result = ""
            var count = 0
            let ellipsis = "…"
            for character in text {
                let size = character.utf8.count
                if count + size + ellipsis.utf8.count > bytes { break }
                result.append(character)
                count += size
            }
            return result + ellipsis
        }
    }

    /// How a daemon in fleet mode reports its status (``FleetHostStatus``) under
    /// `PREFIX/.status/HOST`.
    package struct FleetStatusOptions: Sendable, Hashable {
        /// Whether the daemon reports at all (`$ENVIRONMENTS_ETCD_STATUS=off` turns it off).
        package var isEnabled = true
        /// The host id; `nil` for `/etc/machine-id` (else the host name), with `@INSTANCE` when the
        /// daemon runs an instance (`$ENVIRONMENTS_ETCD_HOST_ID` sets it).
        package var hostID: String?
        /// The application's version, reported beside the library's.
        package var applicationVersion: String?
        /// The lease's TTL (30 s by default, at least 2 s; `$ENVIRONMENTS_ETCD_STATUS_TTL` in
        /// seconds): a host that stops renewing drops out this long after its last renewal. The
        /// lease is renewed every third of it, and the value rewritten every two TTLs when nothing
        /// changed (so that readers see when the host last renewed); changes that come fast are
        /// written at most once a second, the newest.
        package var ttl: Duration = .seconds(30)
        /// How often the value is rewritten when nothing changed, so that readers see when the host
        /// last renewed: twice the TTL (60 s by default).
        package var refresh: Duration { ttl * 2 }
        /// The least time between two writes of the value when changes come fast: 1 s; the newest
        /// report is written, the ones between are skipped.
        package static let minimumWriteInterval: Duration = .seconds(1)

        /// The variable that turns reporting off: `ENVIRONMENTS_ETCD_STATUS=off`.
        package static let enabledVariable = "ENVIRONMENTS_ETCD_STATUS"
        /// The variable that sets the host id.
        package static let hostIDVariable = "ENVIRONMENTS_ETCD_HOST_ID"
        /// The variable that sets the TTL, in seconds.
        package static let ttlVariable = "ENVIRONMENTS_ETCD_STATUS_TTL"

        /// The defaults.
        package init() {}

        /// The TTL in whole seconds, as etcd takes it.
        package var ttlSeconds: Int { max(2, Int(ttl.components.seconds)) }

        /// The host id for a daemon running `instance`: ``hostID`` if set, else the machine id
        /// (`/etc/machine-id`, else the host name) with `@INSTANCE` when there is one; a character
        /// a host id may not hold becomes `_`, and it is cut to 128 bytes.
        package func resolvedHostID(instance: String?) -> String {
            var text = hostID ?? EtcdClient.hostIdentity
            if hostID == nil, let instance, !instance.isEmpty { text += "@" + instance }
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@:".utf8)
            var bytes = text.utf8.map { allowed.contains($0) ? $0 : UInt8(ascii: "_") }.prefix(128)
            if bytes.first == UInt8(ascii: ".") { bytes[bytes.startIndex] = UInt8(ascii: "_") }
            return bytes.isEmpty ? "_" : String(decoding: bytes, as: UTF8.self)
        }

        /// The options the variables of `processEnvironment` set.
        package init(processEnvironment: [String: String]) throws(EtcdError) {
            if let text = processEnvironment[Self.enabledVariable]?.lowercased() {
                switch text {
                case "", "on", "yes", "true", "1": isEnabled = true
                case "off", "no", "false", "0": isEnabled = false
                default:
                    throw EtcdError(
                        operation: "configure", message: "$\(Self.enabledVariable) is '\(text)', not on or off",
                        hint: "\(Self.enabledVariable)=off turns status reporting off")
                }
            }
            if let host = processEnvironment[Self.hostIDVariable], !host.isEmpty {
                guard FleetHostStatus.isValidHostID(host) else {
                    throw EtcdError(
                        operation: "configure",
                        message:
                            "$\(Self.hostIDVariable) is '\(host)', not a host id (1 to 128 of A-Z a-z 0-9 . _ - @ :)",
                        hint: "for example \(Self.hostIDVariable)=web-1")
                }
                hostID = host
            }
            if let text = processEnvironment[Self.ttlVariable], !text.isEmpty {
                guard let seconds = Int(text), (2...3600).contains(seconds) else {
                    throw EtcdError(
                        operation: "configure", message: "$\(Self.ttlVariable) is '\(text)', not 2 to 3600 seconds",
                        hint: "for example \(Self.ttlVariable)=30")
                }
                ttl = .seconds(seconds)
            }
        }
    }

    extension FleetState {
        /// The fleet revision of these documents: the newest revision at which one of them was
        /// written (0 without documents). What `envctl publish` prints, and what hosts report.
        /// Deleting a drop-in alone does not raise it; ``fingerprint`` tells that change.
        package var configurationRevision: Int64 {
            documentKeys.compactMap { entries[$0]?.modRevision }.max() ?? 0
        }

        /// A fingerprint of the documents' keys and bytes (64-bit FNV-1a, hex): equal for equal
        /// documents; a staged publish's keys do not count. A check that a host runs what etcd holds, not a security measure.
        package var fingerprint: String {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            func mix(_ bytes: some Sequence<UInt8>) {
                for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            }
            let keys = entries.keys.filter { Self.isDocumentKey($0, prefix: prefix) }
            for key in keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                let value = entries[key]!.value
                mix(key.utf8)
                mix([0])
                mix(String(value.count).utf8)
                mix([0])
                mix(value)
            }
            return String(hash, radix: 16)
        }
    }
#endif
