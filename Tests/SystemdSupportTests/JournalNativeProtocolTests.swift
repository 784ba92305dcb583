import SystemdSupport
import Testing

@Suite struct JournalNativeProtocolTests {
    @Test func encodesSingleLineValuesAsNameEqualsValue() {
        let datagram = JournalNativeProtocol.encode([("MESSAGE", "hello"), ("PRIORITY", "6")])
        #expect(datagram == Array("MESSAGE=hello\nPRIORITY=6\n".utf8))
    }

    @Test func encodesMultiLineValuesWithLittleEndianLength() {
        let datagram = JournalNativeProtocol.encode([("MESSAGE", "a\nb"), ("X", "")])
        let expected: [UInt8] =
            Array("MESSAGE\n".utf8) + [3, 0, 0, 0, 0, 0, 0, 0] + Array("a\nb\n".utf8)
            + Array("X=\n".utf8)
        #expect(datagram == expected)
    }

    @Test func encodesLongBinaryValues() throws {
        let value = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let datagram = JournalNativeProtocol.encode(
            JournalEntry(fields: [JournalField(name: "BLOB", bytes: value)]))
        #expect(Array(datagram.prefix(5)) == Array("BLOB\n".utf8))
        #expect(Array(datagram[5..<13]) == [44, 1, 0, 0, 0, 0, 0, 0])
        #expect(Array(datagram[13..<313]) == value)
        #expect(datagram.last == UInt8(ascii: "\n"))
        #expect(datagram.count == 314)

        let decoded = try DecodedJournalEntry(datagram: datagram)
        #expect(decoded.fields.count == 1)
        #expect(decoded.fields.first?.value == value)
    }

    @Test func keepsOrderAndRepeatedNames() throws {
        let fields = [
            ("MESSAGE", "Effective configuration"),
            ("CONFIG_SETTING", "Port=8080"),
            ("CONFIG_SETTING", "Banner=line 1\nline 2"),
            ("CONFIG_SETTING", "Empty="),
        ]
        let decoded = try DecodedJournalEntry(datagram: JournalNativeProtocol.encode(fields))
        #expect(decoded.names == ["MESSAGE", "CONFIG_SETTING", "CONFIG_SETTING", "CONFIG_SETTING"])
        #expect(decoded.values("CONFIG_SETTING") == ["Port=8080", "Banner=line 1\nline 2", "Empty="])
    }

    @Test func sanitizesNamesOfPairs() {
        #expect(JournalNativeProtocol.encode([("request.id", "7")]) == Array("REQUEST_ID=7\n".utf8))
    }

    @Test func encodesAnEmptyEntryAsNothing() {
        #expect(JournalNativeProtocol.encode(JournalEntry()).isEmpty)
    }

    @Test("values with NUL, CR, ESC, line feeds and 64 KiB of text stay one field each, byte for byte")
    func carriesAnyBytesInTheirField() throws {
        let values = [
            "a\0b", "a\rb", "\u{1B}[2J\u{7}", "x\nPRIORITY=0\nMESSAGE=forged", "\n", "\0\n\0",
            String(repeating: "z", count: 64 * 1024) + "\nPRIORITY=0",
        ]
        for value in values {
            let decoded = try DecodedJournalEntry(
                datagram: JournalNativeProtocol.encode([("MESSAGE", value), ("PRIORITY", "6")]))
            #expect(decoded.names == ["MESSAGE", "PRIORITY"])
            #expect(decoded.values("MESSAGE") == [value])
            #expect(decoded.values("PRIORITY") == ["6"])
        }
    }
}
