#if Fleet
    import Logging

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// Reading the fleet's documents: the listing, the documents in runs held to the fleet's
    /// limits, and a staged publish's record and candidate.
    extension EtcdClient {
        /// The fleet's documents under the configuration's prefix, at one revision: the layout's
        /// keys only (`Environments.plist`, `Environments.plist.d/NAME.plist`), held to
        /// `configuration.limits`.
        ///
        /// First the names and revisions of the keys from `PREFIX/Environments.plist` to the end of
        /// `PREFIX/Environments.plist.d/` (no values), then, at that listing's revision, the values
        /// of the documents among them: one range per run of documents with no other key between
        /// them (one in all, usually). No other key's value is read, and no key outside that span
        /// is even listed. A limit exceeded is not an error: the state says which
        /// (``FleetState/violation``), and what it lacks is what was not read past the limit.
        ///
        /// - Throws: ``EtcdError`` if no endpoint answers, or etcd refuses.
        package func readFleet() async throws(EtcdError) -> FleetState {
            var attempts = 0
            while true {
                do {
                    return try await readFleetOnce()
                } catch  where error.isCompacted && attempts < 3 {
                    // The listing's revision was compacted away (or, on a member that lags, is not
                    // there yet) before the values were read: read again.
                    attempts += 1
                }
            }
        }

        private func readFleetOnce() async throws(EtcdError) -> FleetState {
            let prefix = configuration.prefix
            switch try await listFleetKeys() {
            case .pastLimit(let state):
                return state
            case .keys(let listed, let revision):
                let tally = try await readDocuments(in: Self.documentRuns(in: listed, prefix: prefix), at: revision)
                let staged = try await readStagedPublish(listed: listed, at: revision)
                return FleetState(
                    prefix: prefix, revision: revision, keyValues: tally.read + staged, violation: tally.violation)
            }
        }

        /// What the listing of the fleet's span found.
        private enum FleetListing {
            /// The keys from the main document to the end of the drop-in directory (no values), and
            /// the revision of the listing.
            case keys([EtcdKeyValue], revision: Int64)
            /// Too many keys or documents: the state to return, which names the limit.
            case pastLimit(FleetState)
        }

        /// The names and revisions of the keys from `PREFIX/Environments.plist` to the end of
        /// `PREFIX/Environments.plist.d/`, held to the limits on listed keys and on documents.
        private func listFleetKeys() async throws(EtcdError) -> FleetListing {
            let prefix = configuration.prefix
            let limits = configuration.limits
            let mainKey = FleetState.mainKey(prefix: prefix)
            var request = Etcdserverpb_RangeRequest()
            request.key = mainKey.etcdKey
            request.rangeEnd = rangeEnd(ofPrefix: FleetState.dropInDirectory(prefix: prefix))
            request.limit = Int64(FleetLimits.listedKeys)
            request.keysOnly = true
            let listing: Etcdserverpb_RangeResponse
            do {
                listing = try await range(
                    request, operation: "list the fleet's documents under \(prefix)",
                    maximumResponseSize: FleetLimits.listedBytes)
            } catch  where error.responseTooLarge {
                return .pastLimit(
                    FleetState(
                        prefix: prefix, revision: 0, keyValues: [],
                        violation: .listedKeys(key: FleetState.dropInDirectory(prefix: prefix), prefix: prefix)))
            }
            let revision = listing.header.revision
            let listed = listing.kvs.map(EtcdKeyValue.init)
            if listing.more {
                return .pastLimit(
                    FleetState(
                        prefix: prefix, revision: revision, keyValues: [],
                        violation: .listedKeys(key: listed.last?.key ?? mainKey, prefix: prefix)))
            }
            let documents = listed.filter { FleetState.isDocumentKey($0.key, prefix: prefix) }
            if documents.count > limits.documents {
                return .pastLimit(
                    FleetState(
                        prefix: prefix, revision: revision, keyValues: [],
                        violation: .documents(
                            documents.count, key: documents[limits.documents].key, prefix: prefix, limits: limits)))
            }
            return .keys(listed, revision: revision)
        }

        /// The documents among `listed`, in runs with no other key between them, in key order.
        private static func documentRuns(in listed: [EtcdKeyValue], prefix: String) -> [[EtcdKeyValue]] {
            var runs: [[EtcdKeyValue]] = []
            var previousWasDocument = false
            for keyValue in listed {
                let document = FleetState.isDocumentKey(keyValue.key, prefix: prefix)
                if document {
                    if previousWasDocument { runs[runs.count - 1].append(keyValue) } else { runs.append([keyValue]) }
                }
                previousWasDocument = document
            }
            return runs
        }

        /// The values of the documents of `runs` at `revision`, one range per run, held to the
        /// limits; a run too large together is read one document at a time, to name the document
        /// past a limit.
        private func readDocuments(in runs: [[EtcdKeyValue]], at revision: Int64) async throws(EtcdError)
            -> FleetReadTally
        {
            let limits = configuration.limits
            var tally = FleetReadTally(prefix: configuration.prefix, limits: limits)
            runs: for run in runs {
                if let keyValues = try await values(
                    of: run, at: revision, budget: min(run.count * limits.documentBytes, tally.bytesLeft))
                {
                    for keyValue in keyValues where !tally.take(keyValue) { break runs }
                    continue
                }
                // Too large together: one at a time, to name the document past a limit.
                for document in run {
                    let budget = min(limits.documentBytes, tally.bytesLeft)
                    if let keyValue = try await values(of: [document], at: revision, budget: budget)?.first {
                        if !tally.take(keyValue) { break runs }
                    } else if budget == limits.documentBytes {
                        tally.tooLarge(document.key, document.modRevision, size: limits.documentBytes, atLeast: true)
                    } else {
                        tally.totalTooLarge(at: document.key)
                        break runs
                    }
                }
            }
            return tally
        }

        /// Reads `run` at `revision`, or `nil` if its answer is larger than `budget` bytes of values.
        private func values(of run: [EtcdKeyValue], at revision: Int64, budget: Int) async throws(EtcdError)
            -> [EtcdKeyValue]?
        {
            let first = run.first!.key
            let last = run.last!.key
            var request = Etcdserverpb_RangeRequest()
            request.key = first.etcdKey
            request.rangeEnd = Data(Array(last.utf8) + [0])
            request.revision = revision
            do {
                let response = try await range(
                    request, operation: run.count == 1 ? "range \(first)" : "range \(first) to \(last)",
                    maximumResponseSize: Self.encodedSize(values: budget, keys: run.map(\.key)))
                return response.kvs.map(EtcdKeyValue.init)
            } catch  where error.responseTooLarge {
                return nil
            }
        }

        /// A staged publish's record and candidate, when `listed` has them: in one range at the same
        /// revision, within what a whole fleet may hold and the record. Too large, they are not
        /// read, and every host keeps the fleet's own documents (FleetState.effective).
        private func readStagedPublish(listed: [EtcdKeyValue], at revision: Int64) async throws(EtcdError)
            -> [EtcdKeyValue]
        {
            let prefix = configuration.prefix
            let staged = listed.filter { FleetRollout.isRolloutKey($0.key, prefix: prefix) }
            guard !staged.isEmpty else { return [] }
            let directory = FleetRollout.directory(prefix: prefix)
            var request = Etcdserverpb_RangeRequest()
            request.key = directory.etcdKey
            request.rangeEnd = rangeEnd(ofPrefix: directory)
            request.revision = revision
            do {
                let response = try await range(
                    request, operation: "range \(directory)",
                    maximumResponseSize: Self.encodedSize(
                        values: configuration.limits.totalBytes + FleetRollout.maximumBytes, keys: staged.map(\.key)))
                return response.kvs.map(EtcdKeyValue.init)
            } catch  where error.responseTooLarge {
                logger.warning(
                    "the staged publish under \(directory) is larger than the fleet may be; this host keeps the fleet's own documents",
                    metadata: ["etcd_revision": "\(revision)"])
                return []
            }
        }

        /// The most bytes of a range answer that holds `keys` with `values` bytes of values in all:
        /// both, and room for each key's other fields and the header.
        private static func encodedSize(values: Int, keys: [String]) -> Int {
            min(values, Int.max / 2) + keys.reduce(4096) { $0 + $1.utf8.count + 64 }
        }
    }
#endif
