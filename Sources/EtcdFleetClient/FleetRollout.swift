#if Fleet
    import Environments

    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// A staged publish in progress: which validated documents (the candidate) go to which hosts.
    ///
    /// `envctl publish --stage 5%,25%,100%` writes the candidate's documents under
    /// `PREFIX/Environments.plist.candidate/` and this record at `PREFIX/Environments.plist.candidate/rollout`,
    /// in one transaction. A daemon that is in the stage (``includes(host:)``) runs the candidate's
    /// documents instead of the fleet's; the others keep the fleet's. Widening rewrites the record;
    /// finishing at 100% writes the candidate as the fleet's documents and deletes the candidate;
    /// a rollback deletes the candidate, so that every host returns to the fleet's documents.
    ///
    /// The keys sort between `PREFIX/Environments.plist` and `PREFIX/Environments.plist.d/`, so the
    /// daemon's one read and one watch of its documents cover them, and one transaction's changes
    /// arrive in one message. They are no document's keys: a daemon that predates staged publishes
    /// ignores them and keeps the fleet's documents.
    ///
    /// The value is a JSON object of at most ``maximumBytes`` (`schema` 1).
    package struct FleetRollout: Codable, Sendable, Hashable {
        /// One step of a staged publish, as `--stage` gives it.
        ///
        /// In the record, a step is the text that gives it (`"5%"`, `"3"`, `"host:web-1,host:web-2"`).
        package enum Step: Codable, Sendable, Hashable, CustomStringConvertible {
            /// A share of the hosts that report, in percent (1 to 100), at least one host.
            case percent(Int)
            /// A number of the hosts that report, at least one.
            case count(Int)
            /// These hosts, by host id.
            case hosts([String])

            package var description: String {
                switch self {
                case .percent(let percent): return "\(percent)%"
                case .count(let count): return "\(count) host\(count == 1 ? "" : "s")"
                case .hosts(let hosts): return hosts.joined(separator: ",")
                }
            }

            /// The text `--stage` takes for this step alone.
            package var text: String {
                switch self {
                case .percent(let percent): return "\(percent)%"
                case .count(let count): return "\(count)"
                case .hosts(let hosts): return hosts.map { "host:" + $0 }.joined(separator: ",")
                }
            }

            package init(from decoder: any Decoder) throws {
                let text = try decoder.singleValueContainer().decode(String.self)
                guard let steps = try? Self.parse(text), steps.count == 1 else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "not a step"))
                }
                self = steps[0]
            }

            package func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(text)
            }

            /// Whether the step takes every host, newcomers included.
            package var isWhole: Bool {
                if case .percent(100) = self { return true }
                return false
            }

            /// The steps `text` gives, comma-separated: `N%` a share, a number a count of hosts,
            /// anything else a host id (consecutive host ids are one step; `host:NAME` names a host
            /// whose id is a number).
            ///
            /// - Throws: A message that says what is wrong, when a share is not 1 to 100, a count
            ///   not 1 to 100,000, or a host id not one (``FleetHostStatus/isValidHostID(_:)``).
            package static func parse(_ text: String) throws(RolloutError) -> [Step] {
                var steps: [Step] = []
                for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                    let item = String(item).trimmingWhitespace()
                    if item.hasSuffix("%") {
                        guard let percent = Int(item.dropLast()), (1...100).contains(percent) else {
                            throw RolloutError("'\(item)' is not a share of 1% to 100%")
                        }
                        steps.append(.percent(percent))
                    } else if !item.isEmpty, item.allSatisfy(\.isASCII), item.allSatisfy(\.isNumber) {
                        guard let count = Int(item), (1...100_000).contains(count) else {
                            throw RolloutError("'\(item)' is not a count of 1 to 100000 hosts")
                        }
                        steps.append(.count(count))
                    } else {
                        let host = item.hasPrefix("host:") ? String(item.dropFirst(5)) : item
                        guard FleetHostStatus.isValidHostID(host) else {
                            throw RolloutError(
                                "'\(item)' is neither a share (5%), a count (3) nor a host id (1 to 128 of A-Z a-z 0-9 . _ - @ :)"
                            )
                        }
                        if case .hosts(let named) = steps.last {
                            steps[steps.count - 1] = .hosts(named + [host])
                        } else {
                            steps.append(.hosts([host]))
                        }
                    }
                }
                guard !steps.isEmpty, steps.count <= maximumSteps else {
                    throw RolloutError("give 1 to \(maximumSteps) steps, for example --stage 5%,25%,100%")
                }
                return steps
            }
        }

        /// The format of the value.
        package var schema = 1
        /// Tells this publish from any other (a UUID).
        package var id: String
        /// The fleet revision the candidate was validated against.
        package var base: Int64
        /// The fingerprint of the fleet's documents at ``base``: what every host returns to on a rollback.
        package var baseFingerprint: String
        /// The fingerprint of the candidate's documents, under the fleet's own key names: what a host
        /// in the stage reports running (``FleetState/fingerprint``).
        package var fingerprint: String
        /// The candidate's documents, by their names under the prefix (`Environments.plist`,
        /// `Environments.plist.d/NAME.plist`): a host runs the candidate only when it holds every one.
        package var documents: [String]
        /// The steps, in order.
        package var steps: [Step]
        /// The index in ``steps`` of the stage in force.
        package var stage: Int
        /// Hosts whose position (``position(of:)``) is below this are in the stage: 0 (none) to
        /// 2³² (every host, newcomers included).
        package var cutoff: UInt64
        /// Hosts in the stage by name, whatever their position.
        package var hosts: [String]
        /// How long each stage's hosts must keep running the candidate before the next, in seconds.
        package var settle: Int
        /// Whether the publish stopped after ``stage`` and waits for `envctl publish --resume`.
        package var held: Bool
        /// Who started it (`user@host`) and when; when the record was last written.
        package var startedBy: String
        package var started: Date
        package var updated: Date

        package init(
            id: String, base: Int64, baseFingerprint: String, fingerprint: String, documents: [String], steps: [Step],
            settle: Int, startedBy: String, started: Date
        ) {
            self.id = id
            self.base = base
            self.baseFingerprint = baseFingerprint
            self.fingerprint = fingerprint
            self.documents = documents
            self.steps = steps
            self.stage = 0
            self.cutoff = 0
            self.hosts = []
            self.settle = settle
            self.held = false
            self.startedBy = startedBy
            self.started = started
            self.updated = started
        }

        /// The most bytes of the record: 64 KiB (host lists of about 1,000 host ids).
        package static let maximumBytes = 64 << 10
        /// The most steps.
        package static let maximumSteps = 20
        /// The cutoff that takes every host.
        package static let everyHost: UInt64 = 1 << 32

        /// The candidate's directory: `PREFIX/Environments.plist.candidate/`.
        package static func directory(prefix: String, fileName: String = "Environments.plist") -> String {
            prefix + fileName + ".candidate/"
        }

        /// The record's key: `PREFIX/Environments.plist.candidate/rollout`.
        package static func key(prefix: String) -> String { directory(prefix: prefix) + "rollout" }

        /// The key under which the candidate holds the document the fleet keeps at `documentKey`.
        package static func candidateKey(for documentKey: String, prefix: String) -> String {
            directory(prefix: prefix) + documentKey.dropFirst(prefix.count)
        }

        /// Whether `key` is the record or one of the candidate's documents.
        package static func isRolloutKey(_ key: String, prefix: String) -> Bool {
            guard key.hasPrefix(directory(prefix: prefix)) else { return false }
            if key == Self.key(prefix: prefix) { return true }
            return FleetState.isDocumentKey(prefix + key.dropFirst(directory(prefix: prefix).count), prefix: prefix)
        }

        /// A host's place in every staged publish: 0 to 2³² − 1, the same on every run for the same
        /// host id (the top 32 bits of the id's 64-bit FNV-1a hash, finished with MurmurHash3's
        /// fmix64 so that ids that differ in one character spread). A share of the hosts is the
        /// hosts with the lowest positions, so a host in a stage stays in it across restarts and
        /// in every wider stage.
        package static func position(of host: String) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in host.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash ^= hash >> 33
            hash = hash &* 0xff51_afd7_ed55_8ccd
            hash ^= hash >> 33
            hash = hash &* 0xc4ce_b9fe_1a85_ec53
            hash ^= hash >> 33
            return hash >> 32
        }

        /// Whether `host` is in the stage in force.
        package func includes(host: String) -> Bool {
            Self.position(of: host) < cutoff || hosts.contains(host)
        }

        /// Widens the stage to ``steps``[`index`] among `reporting` hosts (the hosts with a status
        /// key now): a share or count takes, besides the hosts already in, those with the lowest
        /// positions until that many are in (at least one); a host list adds its hosts; 100% takes
        /// every host. The stage never narrows.
        package mutating func widen(to index: Int, reporting: [String]) {
            stage = index
            switch steps[index] {
            case .hosts(let named):
                for host in named where !hosts.contains(host) { hosts.append(host) }
            case .percent(100):
                cutoff = Self.everyHost
            case .percent(let percent):
                let wanted = max(1, (reporting.count * percent + 99) / 100)
                take(wanted, of: reporting)
            case .count(let count):
                take(count, of: reporting)
            }
        }

        /// Raises the cutoff until `wanted` of `reporting` are in (every host, newcomers included,
        /// when that is all of them).
        private mutating func take(_ wanted: Int, of reporting: [String]) {
            let unique = Set(reporting)
            guard wanted < unique.count else {
                cutoff = Self.everyHost
                return
            }
            var inStage = unique.filter(includes(host:)).count
            let outside = unique.filter { !includes(host: $0) }.map(Self.position(of:)).sorted()
            for position in outside where inStage < wanted {
                cutoff = max(cutoff, position + 1)
                inStage += 1
            }
        }

        /// The JSON value.
        package func encoded() throws(RolloutError) -> Data {
            guard let data = FleetJSON.encode(self) else { throw RolloutError("the rollout record cannot be encoded") }
            guard data.count <= Self.maximumBytes else {
                throw RolloutError(
                    "the rollout record would be \(data.count) bytes, more than \(Self.maximumBytes): name fewer hosts, and give shares (5%) or counts instead"
                )
            }
            return data
        }

        /// The record a value holds, or `nil` when it is not one (too large, not JSON, another schema).
        package static func decode(_ data: Data) -> FleetRollout? {
            guard let rollout = FleetJSON.decode(FleetRollout.self, from: data, maximumBytes: maximumBytes),
                rollout.schema == 1
            else { return nil }
            return rollout
        }
    }

    /// Why a staged publish's steps or record cannot be used.
    package struct RolloutError: Error, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }
#endif
