#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A snapshot's table of entries by key path, made for the read path: `fetch` and every typed
/// read look a key up here.
///
/// A `[String: SettingEntry]` hashes every key with SipHash over its Unicode-normalized
/// scalars and compares keys as Unicode strings: right for any text, and most of a lookup's
/// cost. Key paths are nearly always ASCII, where the bytes are the text. So for a table whose
/// keys are all ASCII, and a key that is ASCII, this index hashes the key's UTF-8 bytes eight
/// at a time (a multiply-xorshift hash, seeded at random once per process, so that which keys
/// collide cannot be known in advance) into an open-addressing table of 4-byte slots (the
/// entry's position and, in the bits it leaves, a tag of the hash), and compares bytes. Everything else
/// keeps Swift's semantics, where two spellings of one text are one key (`"e\u{301}"` is
/// `"é"`, and the Kelvin sign `K` is `K`): a table with a key that is not ASCII is a Swift
/// dictionary; in a table of ASCII keys, a key that is not ASCII is found only if it is the
/// same text as an ASCII key, which it is when its characters are ASCII or one of the three
/// that are canonically equivalent to an ASCII character (``asciiEquivalent(of:)``): it is then
/// looked up as that ASCII text, and otherwise it is not there.
///
/// Everything is built with the table, when the snapshot is: a lookup takes no lock and builds
/// nothing, so a `fork()` beside a read leaves the child nothing held (a lock made at the first
/// lookup of a key that is not ASCII did, until 2026-11).
///
/// A lookup of an ASCII key writes no memory, not even a reference count: it goes through a
/// ``SettingLookup``, plain pointers into memory that this index owns (allocated when it is
/// built, freed when it is), not through this object or its arrays, whose reference counts
/// every reading thread would write; and it compares the key with a copy of the table's keys'
/// bytes, all in one buffer, rather than with the keys themselves (a `String` copied out of
/// the table retains its storage, a write to memory that every thread reading that key
/// shares). Only the entry it returns is copied, as a dictionary's value is.
///
/// Costs: a lookup hashes the key once and compares bytes with the keys whose tag matches; the
/// slots are at most three-quarters full, as a Swift dictionary's are; at worst (keys that
/// all collide) a lookup probes every slot: linear in the table's size, which the key limits
/// bound. Memory: 4 bytes a slot, each key's bytes once with 4 bytes for where they start, and
/// the entries (24 bytes each). A table of ASCII keys keeps no `String` of its keys: the bytes
/// are the keys, and iterating makes each key's `String` from them (off the read path: a
/// reload's comparisons, listings). Keeping the keys' `String`s too cost 56 bytes a key at
/// 10,000 keys (their array and, for keys longer than 15 bytes, their storage), a quarter of a
/// snapshot's memory. A Swift dictionary of the same keys stores each key and entry in a
/// slot of its own: 40 bytes a slot, beside each key's storage.
final class SettingIndex: Sendable {
    /// How many keys (and entries) there are.
    let count: Int
    /// Set when a key is not ASCII (or the keys' bytes pass 4 GiB, beyond the 32-bit offsets):
    /// the keys, and the table as a dictionary of their positions.
    private let fallback: Fallback?
    /// The memory a read probes, which this index owns: valid for as long as it lives.
    let lookup: SettingLookup

    private struct Fallback: Sendable {
        let keys: [String]
        let positions: [String: Int]
    }

    /// The hash's seed: random, once per process; with `SWIFT_DETERMINISTIC_HASHING` set, as
    /// for Swift's own hashing, a fixed one, so that runs that count instructions repeat.
    private static let processSeed: UInt64 =
        getenv("SWIFT_DETERMINISTIC_HASHING").map { $0.pointee != 0 } == true
        ? 0x6A09_E667_F3BC_C908 : UInt64.random(in: .min ... .max)

    /// A table of `table`'s keys and entries.
    convenience init(_ table: [String: SettingEntry]) {
        self.init(keys: Array(table.keys), entries: Array(table.values))
    }

    /// A table of `keys`, each with the entry at the same position of `entries`; the keys are
    /// distinct (as a dictionary's are: a snapshot's paths are).
    init(keys: [String], entries: [SettingEntry]) {
        precondition(keys.count == entries.count, "as many keys as entries")
        count = keys.count
        let seed = Self.processSeed
        var totalBytes = 0
        var allASCII = true
        for var key in keys {
            // Native strings are contiguous already; a bridged or lazily made one is copied once.
            let bytes = key.withUTF8 { bytes in
                allASCII = allASCII && Self.isASCII(UnsafeRawBufferPointer(bytes))
                return bytes.count
            }
            totalBytes += bytes
        }
        guard allASCII, totalBytes < Int(UInt32.max), keys.count < Int(UInt32.max >> 1) else {
            fallback = Fallback(
                keys: keys,
                positions: Dictionary(keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { _, last in last }))
            lookup = SettingLookup(
                slots: Self.allocate(1, zeroed: true), positionMask: 0, mask: 0,
                keyStarts: Self.allocate(1, zeroed: true), keyBytes: Self.allocate(1, zeroed: true),
                entries: Self.owned(entries), seed: seed, keysAreASCII: false)
            return
        }
        fallback = nil
        // At most three-quarters full, at least 8 slots.
        var capacity = 8
        while capacity * 3 < keys.count * 4 { capacity *= 2 }
        let mask = capacity - 1
        // Positions plus one, 1 to the number of keys, fit in the low bits; the rest is the tag.
        var positionMask: UInt32 = 1
        while UInt64(positionMask) < UInt64(keys.count) { positionMask = positionMask << 1 | 1 }
        let slots = Self.allocate(capacity, zeroed: true) as UnsafeMutablePointer<UInt32>
        let keyStarts = Self.allocate(keys.count + 1, zeroed: false) as UnsafeMutablePointer<UInt32>
        let keyBytes = Self.allocate(Swift.max(totalBytes, 1), zeroed: false) as UnsafeMutablePointer<UInt8>
        var offset = 0
        for (position, var key) in keys.enumerated() {
            keyStarts[position] = UInt32(truncatingIfNeeded: offset)
            key.withUTF8 { bytes in
                if let base = bytes.baseAddress { (keyBytes + offset).update(from: base, count: bytes.count) }
                let hash = SettingLookup.hash(UnsafeRawBufferPointer(bytes), seed: seed).value
                var slot = Int(truncatingIfNeeded: hash) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] =
                    (UInt32(truncatingIfNeeded: hash >> 32) & ~positionMask) | UInt32(truncatingIfNeeded: position + 1)
                offset += bytes.count
            }
        }
        keyStarts[keys.count] = UInt32(truncatingIfNeeded: offset)
        lookup = SettingLookup(
            slots: UnsafePointer(slots), positionMask: positionMask, mask: mask, keyStarts: UnsafePointer(keyStarts),
            keyBytes: UnsafePointer(keyBytes), entries: Self.owned(entries), seed: seed, keysAreASCII: true)
    }

    deinit {
        UnsafeMutablePointer(mutating: lookup.entries).deinitialize(count: count)
        lookup.entries.deallocate()
        lookup.slots.deallocate()
        lookup.keyStarts.deallocate()
        lookup.keyBytes.deallocate()
    }

    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var high: UInt64 = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            high |= UInt64(bytes[offset])
            offset += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Memory for `count` elements (at least one), zeroed or not, which ``deinit`` frees.
    private static func allocate<Element: BitwiseCopyable>(
        _ count: Int, zeroed: Bool
    ) -> UnsafeMutablePointer<Element> {
        let capacity = Swift.max(count, 1)
        let memory = UnsafeMutablePointer<Element>.allocate(capacity: capacity)
        if zeroed {
            UnsafeMutableRawPointer(memory).initializeMemory(
                as: UInt8.self, repeating: 0, count: capacity * MemoryLayout<Element>.stride)
        }
        return memory
    }

    /// A copy of `elements` in memory of its own (at least one element's worth, so that an
    /// empty table has pointers too), which ``deinit`` frees.
    private static func owned<Element>(_ elements: [Element]) -> UnsafePointer<Element> {
        let memory = UnsafeMutablePointer<Element>.allocate(capacity: Swift.max(elements.count, 1))
        _ = UnsafeMutableBufferPointer(start: memory, count: elements.count).initialize(fromContentsOf: elements)
        return UnsafePointer(memory)
    }

    /// The key at `position`: made from its bytes in a table of ASCII keys.
    func key(at position: Int) -> String {
        if let fallback { return fallback.keys[position] }
        let start = Int(lookup.keyStarts[position])
        let end = Int(lookup.keyStarts[position + 1])
        return String(
            decoding: UnsafeBufferPointer(start: lookup.keyBytes + start, count: end - start), as: UTF8.self)
    }

    /// The entry at `key`, compared as Swift compares strings.
    subscript(key: String) -> SettingEntry? {
        // An ASCII key in a table of ASCII keys: found or not, as the bytes say.
        if let decided = lookup.position(of: key) { return decided.map { lookup.entries[$0] } }
        return unicodePosition(of: key).map { lookup.entries[$0] }
    }

    /// The position of `key` as a Swift dictionary finds it (a table with a key that is not
    /// ASCII, a key that is not ASCII, a key without contiguous UTF-8).
    private func unicodePosition(of key: String) -> Int? {
        if let fallback { return fallback.positions[key] }
        // A table of ASCII keys: `key` is one of them only if it is the same text as ASCII.
        var equivalentToASCII = true
        for scalar in key.unicodeScalars where !scalar.isASCII {
            if Self.asciiEquivalent(of: scalar) == nil {
                equivalentToASCII = false
                break
            }
        }
        guard equivalentToASCII else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(key.utf8.count)
        for scalar in key.unicodeScalars {
            bytes.append(scalar.isASCII ? UInt8(truncatingIfNeeded: scalar.value) : Self.asciiEquivalent(of: scalar)!)
        }
        return bytes.withUnsafeBytes { lookup.position(ofASCII: $0) } ?? nil
    }

    /// The ASCII character that `scalar`, which is not ASCII, is canonically equivalent to, if
    /// any: the Kelvin sign U+212A is `K`, the Greek question mark U+037E is `;`, the Greek
    /// varia U+1FEF is `` ` ``. These three singletons are the only such characters (every
    /// other canonical decomposition holds a character that is not ASCII, and Unicode's
    /// stability policy keeps decompositions as they are); a test checks it against Swift's
    /// own comparison of every scalar.
    static func asciiEquivalent(of scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x212A: UInt8(ascii: "K")
        case 0x037E: UInt8(ascii: ";")
        case 0x1FEF: UInt8(ascii: "`")
        default: nil
        }
    }
}

extension SettingIndex: Sequence {
    /// The keys and entries, in no particular order.
    struct Iterator: IteratorProtocol {
        fileprivate let index: SettingIndex
        fileprivate var position = 0

        mutating func next() -> (String, SettingEntry)? {
            guard position < index.count else { return nil }
            defer { position += 1 }
            return (index.key(at: position), index.lookup.entries[position])
        }
    }

    func makeIterator() -> Iterator {
        Iterator(index: self)
    }
}
