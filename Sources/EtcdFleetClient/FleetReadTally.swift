#if Fleet
    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// What a read of the fleet's documents has taken so far, held to the fleet's limits: the
    /// documents read, their bytes, and the first limit exceeded (with every document left unread
    /// for it).
    struct FleetReadTally {
        let prefix: String
        let limits: FleetLimits
        /// The documents read, in the order read.
        private(set) var read: [EtcdKeyValue] = []
        /// The bytes of their values.
        private(set) var total = 0
        /// The first limit exceeded, if any.
        private(set) var violation: FleetLimitViolation?

        init(prefix: String, limits: FleetLimits) {
            self.prefix = prefix
            self.limits = limits
        }

        /// The bytes of values the fleet may still hold.
        var bytesLeft: Int { limits.totalBytes - total }

        /// Notes a document too large to read (the first one names the violation).
        mutating func tooLarge(_ key: String, _ modRevision: Int64, size: Int, atLeast: Bool) {
            if violation == nil {
                violation = .documentBytes(size, atLeast: atLeast, key: key, modRevision: modRevision, limits: limits)
            }
            violation?.unread[key] = modRevision
        }

        /// Notes that the document at `key` would take the fleet past its total, unread.
        mutating func totalTooLarge(at key: String) {
            violation = .totalBytes(limits.totalBytes, atLeast: true, key: key, prefix: prefix, limits: limits)
        }

        /// Counts `keyValue` in, unless it is past a limit; `false` once the total is (stop reading).
        mutating func take(_ keyValue: EtcdKeyValue) -> Bool {
            if keyValue.value.count > limits.documentBytes {
                tooLarge(keyValue.key, keyValue.modRevision, size: keyValue.value.count, atLeast: false)
                return true
            }
            total += keyValue.value.count
            if total > limits.totalBytes {
                violation = .totalBytes(total, atLeast: false, key: keyValue.key, prefix: prefix, limits: limits)
                return false
            }
            read.append(keyValue)
            return true
        }
    }
#endif
