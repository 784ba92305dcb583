#if Fleet
    package import Environments

    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// The fleet's documents as read from etcd at one revision.
    ///
    /// The keys mirror the files: `PREFIX/Environments.plist` holds a whole `Environments.plist`,
    /// `PREFIX/Environments.plist.d/NAME.plist` a drop-in (XML or binary property lists). A staged
    /// publish in progress adds its record and candidate under `PREFIX/Environments.plist.candidate/`
    /// (``FleetRollout``). Other keys under the prefix are ignored, as other files in a
    /// configuration directory are: they are never read.
    package struct FleetState: Sendable, Hashable, Codable {
        /// The prefix the keys live under, with its trailing `/`.
        package var prefix: String
        /// The revision the documents were read at.
        package var revision: Int64
        /// The documents' keys, values and last-change revisions, by key; and those of a staged
        /// publish in progress (``FleetRollout/isRolloutKey(_:prefix:)``).
        package var entries: [String: Entry]
        /// The limit the documents exceed, if any: then ``entries`` may lack documents (those past
        /// the limit are not read), and a configuration built from this state fails with it.
        package var violation: FleetLimitViolation?

        /// One key of the fleet.
        package struct Entry: Sendable, Hashable, Codable {
            /// The document's bytes.
            package var value: Data
            /// The revision of the key's last change.
            package var modRevision: Int64

            /// A document's bytes and the revision of its last change.
            package init(value: Data, modRevision: Int64) {
                self.value = value
                self.modRevision = modRevision
            }
        }

        /// The main file's key under `prefix`.
        package static func mainKey(prefix: String, fileName: String = "Environments.plist") -> String {
            prefix + fileName
        }

        /// A drop-in's key under `prefix`; `name` with or without `.plist`.
        package static func dropInKey(prefix: String, name: String, fileName: String = "Environments.plist") -> String {
            prefix + fileName + ".d/" + (name.hasSuffix(".plist") ? name : name + ".plist")
        }

        /// The drop-in directory's key prefix: `PREFIX/Environments.plist.d/`.
        package static func dropInDirectory(prefix: String, fileName: String = "Environments.plist") -> String {
            prefix + fileName + ".d/"
        }

        /// Whether `key` is one of the fleet's documents.
        package static func isDocumentKey(_ key: String, prefix: String, fileName: String = "Environments.plist")
            -> Bool
        {
            if key == mainKey(prefix: prefix, fileName: fileName) { return true }
            let dropIns = prefix + fileName + ".d/"
            guard key.hasPrefix(dropIns) else { return false }
            let name = String(key.dropFirst(dropIns.count))
            return !name.contains("/") && ConfigurationLocation.isDropInFileName(name)
        }

        /// Whether `key` is read as part of the fleet: a document (``isDocumentKey(_:prefix:fileName:)``),
        /// or the record or a candidate document of a staged publish.
        package static func isFleetKey(_ key: String, prefix: String) -> Bool {
            isDocumentKey(key, prefix: prefix) || FleetRollout.isRolloutKey(key, prefix: prefix)
        }

        /// The state of `keyValues`, read at `revision`, keeping the fleet's keys only.
        package init(
            prefix: String, revision: Int64, keyValues: [EtcdKeyValue], violation: FleetLimitViolation? = nil
        ) {
            self.prefix = prefix
            self.revision = revision
            self.violation = violation
            entries = [:]
            for keyValue in keyValues where Self.isFleetKey(keyValue.key, prefix: prefix) {
                entries[keyValue.key] = Entry(value: keyValue.value, modRevision: keyValue.modRevision)
            }
        }

        /// Checks ``entries`` against `limits` and sets ``violation`` to the first limit they
        /// exceed (`nil` if none), dropping a document past its size: so a state a watch built is
        /// held to the limits the read is held to.
        package mutating func enforce(_ limits: FleetLimits) {
            violation = nil
            let keys = documentKeys
            if keys.count > limits.documents {
                violation = .documents(keys.count, key: keys[limits.documents], prefix: prefix, limits: limits)
                return
            }
            var total = 0
            for key in keys {
                let entry = entries[key]!
                if entry.value.count > limits.documentBytes {
                    violation = .documentBytes(
                        entry.value.count, atLeast: false, key: key, modRevision: entry.modRevision, limits: limits)
                    entries[key] = nil
                    return
                }
                total += entry.value.count
                if total > limits.totalBytes {
                    violation = .totalBytes(total, atLeast: false, key: key, prefix: prefix, limits: limits)
                    return
                }
            }
        }

        /// Applies the changes of one watch message, which etcd made at `revision`.
        ///
        /// - Returns: Whether a document changed.
        @discardableResult
        package mutating func apply(_ changes: [EtcdClient.EtcdChange], at revision: Int64) -> Bool {
            var changed = false
            for change in changes where Self.isFleetKey(change.key, prefix: prefix) {
                if let value = change.value {
                    let entry = Entry(value: value, modRevision: change.modRevision)
                    if entries[change.key] != entry {
                        entries[change.key] = entry
                        changed = true
                    }
                } else if entries.removeValue(forKey: change.key) != nil {
                    changed = true
                }
            }
            self.revision = max(self.revision, revision)
            return changed
        }

        /// The documents, lowest first: the main document, then the drop-ins in byte order of their
        /// names. Each names its key and its revision (`etcd:/fleet/app/Environments.plist@42`).
        package var documents: [ConfigurationDocument] {
            documentKeys.map { key in
                let entry = entries[key]!
                return ConfigurationDocument(origin: "etcd:\(key)@\(entry.modRevision)", data: entry.value)
            }
        }

        /// The documents' keys in the order of ``documents``.
        package var documentKeys: [String] {
            entries.keys.filter { Self.isDocumentKey($0, prefix: prefix) }.sorted { lhs, rhs in
                let lhsMain = lhs == Self.mainKey(prefix: prefix)
                let rhsMain = rhs == Self.mainKey(prefix: prefix)
                if lhsMain != rhsMain { return lhsMain }
                return Array(lhs.utf8).lexicographicallyPrecedes(Array(rhs.utf8))
            }
        }
    }

    extension FleetState {
        /// The staged publish in progress, if its record is there and readable.
        package var rollout: FleetRollout? {
            entries[FleetRollout.key(prefix: prefix)].flatMap { FleetRollout.decode($0.value) }
        }

        /// The documents `host` runs: the candidate's, under the fleet's own key names, when a staged
        /// publish is in progress, `host` is in its stage, and the candidate is whole (every document
        /// the record names, with the record's fingerprint); else the fleet's own. Held to `limits`
        /// either way (``enforce(_:)``). Without a host (`nil`), the fleet's own.
        package func effective(forHost host: String?, limits: FleetLimits) -> FleetState {
            var own = self
            own.entries = entries.filter { Self.isDocumentKey($0.key, prefix: prefix) }
            guard let host, let rollout, rollout.includes(host: host) else { return own }
            var candidate = own
            candidate.entries = [:]
            candidate.violation = nil
            for name in rollout.documents {
                let key = prefix + name
                guard Self.isDocumentKey(key, prefix: prefix),
                    let entry = entries[FleetRollout.candidateKey(for: key, prefix: prefix)]
                else { return own }
                candidate.entries[key] = entry
            }
            guard candidate.fingerprint == rollout.fingerprint else { return own }
            candidate.enforce(limits)
            return candidate
        }
    }
#endif
