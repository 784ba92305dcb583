import Environments
import EtcdFleetClient
import Locking

/// The fleet's documents as a `ConfigurationLayer` below the host's files: what
/// ``EtcdFleet`` last read from etcd (or from its cache), held in memory so that every reload
/// takes them at once.
package final class FleetLayer: ConfigurationLayer {
    private let state: Locked<FleetState>

    init(_ state: FleetState) {
        self.state = Locked(state)
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

    func update(_ new: FleetState) {
        state.withLock { $0 = new }
    }
}
