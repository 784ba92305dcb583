#if Fleet
    package import Environments
    import EtcdFleetClient
    import Locking

    /// The fleet's documents as a `ConfigurationSource` below the host's files: what
    /// ``EtcdFleet`` last read from etcd (or from its cache), held in memory so that every reload
    /// takes them at once.
    ///
    /// While a staged publish is in progress, a host in its stage runs the candidate's documents
    /// (``FleetState/effective(forHost:limits:)``): which host this is, the fleet learns when it is
    /// applied to the environment's options (the instance is part of the host id).
    package final class FleetLayer: ConfigurationSource {
        private struct Held {
            /// Everything read: the documents, and a staged publish's record and candidate.
            var state: FleetState
            /// The host id a staged publish selects by; `nil` until known.
            var host: String?
            /// The documents this host runs, from `state`.
            var effective: FleetState
            /// Their revision and fingerprint, for the status key: computed when they change (by the
            /// fleet's watch, in proportion to the bytes it just received), never on the reloader.
            var identity: (revision: Int64, fingerprint: String)
        }
        private let held: Locked<Held>
        private let limits: FleetLimits

        init(_ state: FleetState, limits: FleetLimits) {
            self.limits = limits
            let effective = state.effective(forHost: nil, limits: limits)
            held = Locked(
                Held(
                    state: state, host: nil, effective: effective,
                    identity: (effective.configurationRevision, effective.fingerprint)))
        }

        /// `fleet`: the trigger of the reloads a fleet change starts, and the topic of its
        /// `STATUS=` note.
        package var name: String { "fleet" }

        /// The documents, lowest first: the main document, then the drop-ins by name.
        ///
        /// - Throws: `EnvironmentError` (`fileUnreadable`) naming the key, when the documents
        ///   exceed a limit: how many there are, how large one is, how large all are together.
        package func documents() throws(EnvironmentError) -> [ConfigurationDocument] {
            let (documents, violation) = held.withLock { ($0.effective.documents, $0.effective.violation) }
            if let violation {
                throw EnvironmentError.unreadable(
                    "etcd:\(violation.key)",
                    reason: "the fleet exceeds its limit on \(violation.limit): \(violation.message)",
                    hint: violation.hint)
            }
            return documents
        }

        /// The revision the documents were read at.
        package var revision: Int64 { held.withLock { $0.state.revision } }

        /// The whole state, a staged publish's keys included.
        var current: FleetState { held.withLock { $0.state } }

        /// The host id a staged publish selects this host by.
        var host: String? { held.withLock { $0.host } }

        /// The documents this host runs from `state` (its own, or a staged publish's candidate).
        func effective(_ state: FleetState) -> FleetState {
            state.effective(forHost: host, limits: limits)
        }

        /// The documents' fleet revision and fingerprint (``FleetState/configurationRevision``,
        /// ``FleetState/fingerprint``).
        var documentsIdentity: (revision: Int64, fingerprint: String) { held.withLock { $0.identity } }

        /// Names the host (once the environment's instance is known).
        func setHost(_ host: String) {
            let state = current
            let effective = state.effective(forHost: host, limits: limits)
            let identity = (effective.configurationRevision, effective.fingerprint)
            held.withLock {
                $0.host = host
                $0.effective = effective
                $0.identity = identity
            }
        }

        func update(_ new: FleetState) {
            let host = self.host
            let effective = new.effective(forHost: host, limits: limits)
            let changed = held.withLock { held in
                // A key's revision changes with each write of it: comparing them, not the bytes.
                held.effective.entries.mapValues(\.modRevision) != effective.entries.mapValues(\.modRevision)
            }
            let identity = changed ? (effective.configurationRevision, effective.fingerprint) : nil
            held.withLock { held in
                held.state = new
                held.effective = effective
                if let identity { held.identity = identity }
            }
        }
    }
#endif
