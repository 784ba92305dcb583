#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A snapshot's table as a read probes it: plain pointers into the memory that its
/// ``SettingIndex`` owns, and the numbers a probe needs.
///
/// A read reaches the table through this value alone, never through the snapshot or the
/// index object: a class reference that a read used would be retained and released by every
/// reading thread, a write to memory that all of them share (the cost issue 46.8 measured:
/// two threads reading at once each took twice as long per lookup as one). A lookup is kept
/// beside the snapshot in each thread's cache (``ThreadSnapshotCache``), which holds the
/// snapshot, and so the index and this memory, for as long as a read lasts.
///
/// Valid only while its ``SettingIndex`` lives: never keep one beyond a read of the snapshot
/// that made it. The memory is never written after the index is built, so any number of
/// threads may read through copies of one lookup at once.
struct SettingLookup: @unchecked Sendable {
    /// Each: 0 (empty), or the key's position plus one in the bits of ``positionMask`` and, in
    /// the others (the tag), the same bits of the key's hash's upper 32: the more keys, the
    /// fewer bits of tag (18 at 10,000 keys, 12 at a million), so that a slot is 4 bytes.
    let slots: UnsafePointer<UInt32>
    /// The bits of a slot that hold the position plus one: all of them up to a power of two
    /// above the number of keys.
    let positionMask: UInt32
    /// The number of slots minus one, a power of two minus one; 0 when ``keysAreASCII`` is false.
    let mask: Int
    /// Where each key's bytes start in ``keyBytes``, and, last, where the last key's end.
    let keyStarts: UnsafePointer<UInt32>
    /// Every key's UTF-8 bytes, one after the other, in the order of the entries.
    let keyBytes: UnsafePointer<UInt8>
    /// The entries, in the order of the keys.
    let entries: UnsafePointer<SettingEntry>
    /// The hash's seed (``SettingIndex``'s, for the process).
    let seed: UInt64
    /// Whether every key is ASCII: only then are the slots and bytes filled, and a probe by
    /// bytes decides.
    let keysAreASCII: Bool

    /// The entry at a key path when the key's bytes decide: the entry, or `.some(nil)` when
    /// `key` is in its canonical spelling (``SettingPath``: no quotes) and not in the table;
    /// `nil` when the bytes cannot decide (a key or a table that is not ASCII, a key without
    /// contiguous UTF-8, a quoted key that is not there as written), and
    /// ``EnvironmentSnapshot/entry(forKey:)`` must.
    @inline(__always)
    func entry(forKey key: String) -> SettingEntry?? {
        guard let decided = position(of: key) else { return nil }
        if let position = decided { return entries[position] }
        return SettingPath.isPlain(key) ? .some(nil) : nil
    }

    /// The position of `key` when its bytes decide (`.some(nil)`: not there), `nil` when
    /// they cannot: `key` or a key of the table is not ASCII, or `key` has no contiguous UTF-8.
    @inline(__always)
    func position(of key: String) -> Int?? {
        guard keysAreASCII else { return nil }
        return key.utf8.withContiguousStorageIfAvailable { position(ofASCII: UnsafeRawBufferPointer($0)) } ?? nil
    }

    /// The position of `bytes` in the table if they are ASCII (`.some(nil)`: not there),
    /// `nil` if they are not ASCII. Two ASCII strings are the same text only if their bytes
    /// are the same.
    func position(ofASCII bytes: UnsafeRawBufferPointer) -> Int?? {
        let (hash, isASCII) = Self.hash(bytes, seed: seed)
        guard isASCII else { return nil }
        let tag = UInt32(truncatingIfNeeded: hash >> 32) & ~positionMask
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let content = slots[slot]
            if content == 0 { return .some(nil) }
            if content & ~positionMask == tag {
                let position = Int(content & positionMask) - 1
                let start = Int(keyStarts[position])
                if Int(keyStarts[position + 1]) - start == bytes.count
                    && (bytes.isEmpty || memcmp(keyBytes + start, bytes.baseAddress!, bytes.count) == 0)
                {
                    return .some(position)
                }
            }
            slot = (slot + 1) & mask
        }
    }

    /// The hash of `bytes` with `seed`, and whether the bytes are all ASCII: a
    /// multiply-xorshift hash over eight bytes at a time.
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> (value: UInt64, isASCII: Bool) {
        let count = bytes.count
        var hash = seed ^ (UInt64(count) &* 0x9E37_79B9_7F4A_7C15)
        var high: UInt64 = 0
        func mix(_ word: UInt64) {
            high |= word
            hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 31
        }
        var offset = 0
        while offset + 8 <= count {
            mix(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        let rest = count - offset
        if rest > 0 && count >= 8 {
            // The last eight bytes, without those already mixed.
            mix(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) >> UInt64(8 * (8 - rest)))
        } else if rest > 0 {
            // Fewer than eight bytes in all: four, two and one at a time.
            var word: UInt64 = 0
            var shift: UInt64 = 0
            if rest & 4 != 0 {
                word = UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                offset += 4
                shift = 32
            }
            if rest & 2 != 0 {
                word |= UInt64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) << shift
                offset += 2
                shift += 16
            }
            if rest & 1 != 0 { word |= UInt64(bytes[offset]) << shift }
            mix(word)
        }
        hash = (hash ^ (hash >> 29)) &* 0x94D0_49BB_1331_11EB
        hash ^= hash >> 32
        return (hash, high & 0x8080_8080_8080_8080 == 0)
    }
}
