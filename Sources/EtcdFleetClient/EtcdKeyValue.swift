#if Fleet
    #if canImport(FoundationEssentials)
        package import FoundationEssentials
    #else
        package import Foundation
    #endif

    /// A key and its value at a revision.
    package struct EtcdKeyValue: Sendable, Hashable {
        /// The key.
        package var key: String
        /// The value's bytes.
        package var value: Data
        /// The revision of the key's last change.
        package var modRevision: Int64
        /// The lease the key is attached to, or 0 for none.
        package var lease: Int64 = 0

        /// A key, its value and the revision of its last change.
        package init(key: String, value: Data, modRevision: Int64, lease: Int64 = 0) {
            self.key = key
            self.value = value
            self.modRevision = modRevision
            self.lease = lease
        }

        /// The key and value etcd sent (keys are bytes in etcd; the fleet's are UTF-8).
        init(_ keyValue: Mvccpb_KeyValue) {
            self.init(
                key: String(decoding: keyValue.key, as: UTF8.self), value: keyValue.value,
                modRevision: keyValue.modRevision, lease: keyValue.lease)
        }
    }

    extension String {
        /// The UTF-8 bytes: how etcd takes keys.
        var etcdKey: Data { Data(utf8) }
    }

    /// The end of the range of every key that starts with `prefix`: the prefix with its last byte
    /// incremented (etcd's `--prefix`).
    func rangeEnd(ofPrefix prefix: String) -> Data {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return Data(bytes)
            }
            bytes.removeLast()
        }
        return Data([0])
    }
#endif
