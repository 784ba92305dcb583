import Environments
import EtcdFleetClient
import Locking

/// The fleet's documents as a `ConfigurationLayer` below the host's files: what
/// ``EtcdFleet`` last read from etcd (or from its cache), held in memory so that every reload
/// takes them at once.
package final class FleetLayer: ConfigurationLayer {
    private let state: Locked<FleetState>
    /// The documents' revision and fingerprint, for the status key: computed when the state
    /// changes (by the fleet's watch, in proportion to the bytes it just received), never on
    /// the reloader.
    private let identity: Locked<(revision: Int64, fingerprint: String)>

    init(_ state: FleetState) {
        self.state = Locked(state)
        identity = Locked((state.configurationRevision, state.fingerprint))
    }

    /// The documents, lowest first: the main document, then the drop-ins by name.
    ///
    /// - Throws: `EnvironmentError` (`fileUnreadable`) naming the key, when the documents
    ///   exceed a limit: how many there are, how large one is, how large all are together.
    package func documents() throws(EnvironmentError) -> [ConfigurationDocument] {
        let (documents, violation) = state.withLock { ($0.documents, $0.violation) }
        if let violation {
            throw EnvironmentError(
                .fileUnreadable, "the fleet exceeds its limit on \(violation.limit): \(violation.message)",
                file: "etcd:\(violation.key)", hint: violation.hint)
        }
        return documents
    }

    /// The revision the documents were read at.
    package var revision: Int64 { state.withLock { $0.revision } }

    /// The whole state.
    var current: FleetState { state.withLock { $0 } }

    /// The documents' fleet revision and fingerprint (``FleetState/configurationRevision``,
    /// ``FleetState/fingerprint``).
    var documentsIdentity: (revision: Int64, fingerprint: String) { identity.withLock { $0 } }

    func update(_ new: FleetState) {
        let changed = state.withLock { state in
            defer { state = new }
            // A key's revision changes with each write of it: comparing them, not the bytes.
            return state.entries.mapValues(\.modRevision) != new.entries.mapValues(\.modRevision)
        }
        if changed {
            let computed = (new.configurationRevision, new.fingerprint)
            identity.withLock { $0 = computed }
        }
    }
}
