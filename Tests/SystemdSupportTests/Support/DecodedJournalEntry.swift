/// A journal entry decoded from journald's native protocol, independently of the
/// module's encoder.
struct DecodedJournalEntry {
    struct MalformedDatagram: Error {
        let offset: Int
    }

    private(set) var fields: [(name: String, value: [UInt8])] = []

    init(datagram: [UInt8]) throws {
        var index = 0
        let newline = UInt8(ascii: "\n")
        while index < datagram.count {
            let nameStart = index
            while index < datagram.count, datagram[index] != UInt8(ascii: "="),
                datagram[index] != newline
            {
                index += 1
            }
            guard index < datagram.count else { throw MalformedDatagram(offset: index) }
            let name = String(decoding: datagram[nameStart..<index], as: UTF8.self)
            if datagram[index] == UInt8(ascii: "=") {
                index += 1
                let valueStart = index
                while index < datagram.count, datagram[index] != newline { index += 1 }
                guard index < datagram.count else { throw MalformedDatagram(offset: index) }
                fields.append((name, Array(datagram[valueStart..<index])))
                index += 1
            } else {
                index += 1
                guard index + 8 <= datagram.count else { throw MalformedDatagram(offset: index) }
                var length: UInt64 = 0
                for shift in 0..<8 {
                    length |= UInt64(datagram[index + shift]) << (8 * UInt64(shift))
                }
                index += 8
                let end = index + Int(length)
                guard end < datagram.count, datagram[end] == newline else {
                    throw MalformedDatagram(offset: index)
                }
                fields.append((name, Array(datagram[index..<end])))
                index = end + 1
            }
        }
    }

    /// Every value of the field `name`, as text.
    func values(_ name: String) -> [String] {
        fields.filter { $0.name == name }.map { String(decoding: $0.value, as: UTF8.self) }
    }

    /// The only value of the field `name`, or `nil` if it is absent or repeated.
    subscript(_ name: String) -> String? {
        let values = values(name)
        return values.count == 1 ? values[0] : nil
    }

    var names: [String] { fields.map(\.name) }
}
