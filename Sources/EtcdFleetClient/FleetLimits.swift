#if Fleet
    import Environments

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// What the fleet's documents may hold: how many there are, how large one is, how large all
    /// are together. Only the layout's keys count (`PREFIX/Environments.plist` and
    /// `PREFIX/Environments.plist.d/NAME.plist`); nothing else under the prefix is read.
    ///
    /// Each is changed with a variable of the daemon's environment (and envctl's), read by
    /// `EtcdConfiguration.resolve`: `Environment=ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES=32M` in a
    /// drop-in of the unit.
    package struct FleetLimits: Sendable, Hashable {
        /// The most documents (the main one and the drop-ins): 127 by default, which is what one
        /// `envctl publish` transaction can check (etcd's `--max-txn-ops` is 128).
        package var documents = 127
        /// The most bytes of one document: 16 MiB by default, as for a file on disk.
        package var documentBytes = 16 << 20
        /// The most bytes of all documents together: 64 MiB by default.
        package var totalBytes = 64 << 20

        /// The most keys listed (names only) between `PREFIX/Environments.plist` and the end of
        /// `PREFIX/Environments.plist.d/`, documents or not: 10,000; and the most bytes of that list:
        /// 16 MiB. Not configurable: the keys there that are not documents are the ones to remove.
        package static let listedKeys = 10_000
        package static let listedBytes = 16 << 20

        /// The variable for ``documents``.
        package static let documentsVariable = "ENVIRONMENTS_ETCD_MAX_DOCUMENTS"
        /// The variable for ``documentBytes``.
        package static let documentBytesVariable = "ENVIRONMENTS_ETCD_MAX_DOCUMENT_BYTES"
        /// The variable for ``totalBytes``.
        package static let totalBytesVariable = "ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES"

        /// The defaults.
        package init() {}

        /// The limits the variables of `processEnvironment` set, the defaults for those not set.
        ///
        /// - Throws: ``EtcdError`` when a variable is not a positive number of bytes (`K`, `M` and
        ///   `G` allowed) or, for ``documents``, a positive integer.
        package init(processEnvironment: [String: String]) throws(EtcdError) {
            func value(_ name: String, units: Bool) throws(EtcdError) -> Int? {
                guard let text = processEnvironment[name]?.trimmingWhitespace(), !text.isEmpty else {
                    return nil
                }
                var digits = Substring(text)
                var multiplier = 1
                if units,
                    let unit = digits.last.flatMap({ ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30][$0.uppercased()] })
                {
                    multiplier = unit
                    digits = digits.dropLast()
                }
                guard let number = Int(digits), number > 0, number <= Int(Int32.max) else {
                    throw EtcdError(
                        operation: "configure",
                        message: "$\(name) is '\(text)', not a positive \(units ? "size" : "number")",
                        hint: units
                            ? "give bytes, optionally with K, M or G, for example \(name)=32M"
                            : "for example \(name)=200")
                }
                return number * multiplier
            }
            documents = try value(Self.documentsVariable, units: false) ?? documents
            documentBytes = try value(Self.documentBytesVariable, units: true) ?? documentBytes
            totalBytes = try value(Self.totalBytesVariable, units: true) ?? totalBytes
        }

        /// A size for people: `16 MiB`, `1.5 MiB`, `900 KiB`, `12 bytes`.
        package static func describe(bytes: Int) -> String {
            func format(_ value: Double, _ unit: String) -> String {
                value == value.rounded() ? "\(Int(value)) \(unit)" : "\(FleetNumbers.oneDecimal(value)) \(unit)"
            }
            if bytes >= 1 << 20 { return format(Double(bytes) / Double(1 << 20), "MiB") }
            if bytes >= 1 << 10 { return format(Double(bytes) / Double(1 << 10), "KiB") }
            return "\(bytes) bytes"
        }
    }

    /// A limit of ``FleetLimits`` that the fleet's documents exceed: which one, the key, its
    /// value and how to change it. Held by the ``FleetState`` read past it, so that the reload (or
    /// the start) built from it fails with this reason, and the last good configuration stays.
    package struct FleetLimitViolation: Sendable, Hashable, Codable, CustomStringConvertible {
        /// Which limit: `documents`, `document bytes`, `total bytes` or `listed keys`.
        package var limit: String
        /// The key past the limit (for `documents` and `listed keys`, the first key past it).
        package var key: String
        /// What exceeds the limit, for example `2.0 MiB, more than the 1 MiB one document may hold`.
        package var message: String
        /// How to change the limit, or what to do instead.
        package var hint: String
        /// For `document bytes`: every document not read for its size, with the revision of its
        /// last change (`envctl publish` may replace them, on the condition that they are unchanged).
        package var unread: [String: Int64] = [:]

        /// The documents are more than `limits.documents`.
        static func documents(_ count: Int, key: String, prefix: String, limits: FleetLimits) -> Self {
            Self(
                limit: "documents", key: key,
                message:
                    "\(count) documents under \(prefix) (Environments.plist and Environments.plist.d/*.plist), more than the limit of \(limits.documents)",
                hint:
                    "merge drop-ins, or raise the limit with \(FleetLimits.documentsVariable)=\(count) in the daemon's environment (envctl's too)"
            )
        }

        /// One document is larger than `limits.documentBytes` (at least `size` bytes).
        static func documentBytes(_ size: Int, atLeast: Bool, key: String, modRevision: Int64?, limits: FleetLimits)
            -> Self
        {
            Self(
                limit: "document bytes", key: key,
                message:
                    "\(atLeast ? "more than " : "")\(FleetLimits.describe(bytes: size)), more than the limit of \(FleetLimits.describe(bytes: limits.documentBytes)) for one document",
                hint:
                    "split it into drop-ins, or raise the limit with \(FleetLimits.documentBytesVariable)=BYTES (K, M, G allowed) in the daemon's environment (envctl's too)",
                unread: modRevision.map { [key: $0] } ?? [:])
        }

        /// The documents together are larger than `limits.totalBytes` once `key` is counted.
        static func totalBytes(_ size: Int, atLeast: Bool, key: String, prefix: String, limits: FleetLimits) -> Self {
            Self(
                limit: "total bytes", key: key,
                message:
                    "the documents under \(prefix) up to this one hold \(atLeast ? "more than " : "")\(FleetLimits.describe(bytes: size)), more than the limit of \(FleetLimits.describe(bytes: limits.totalBytes)) for all documents together",
                hint:
                    "make the documents smaller, or raise the limit with \(FleetLimits.totalBytesVariable)=BYTES (K, M, G allowed) in the daemon's environment (envctl's too)"
            )
        }

        /// More keys (or bytes of names) than the listing may hold lie among the documents' keys.
        static func listedKeys(key: String, prefix: String) -> Self {
            Self(
                limit: "listed keys", key: key,
                message:
                    "more than \(FleetLimits.listedKeys) keys (or \(FleetLimits.describe(bytes: FleetLimits.listedBytes)) of names) between \(prefix)Environments.plist and the end of \(prefix)Environments.plist.d/",
                hint:
                    "remove the keys there that are not documents (only Environments.plist and Environments.plist.d/NAME.plist are read); this limit is fixed"
            )
        }

        /// `etcd:KEY: the fleet exceeds its limit on LIMIT: MESSAGE (HINT)`.
        package var description: String {
            "etcd:\(key): the fleet exceeds its limit on \(limit): \(message) (\(hint))"
        }
    }
#endif
