#if os(Linux)
    import Logging
    import Testing
    import TextEscaping
    @testable import SystemdSupport

    /// No text in a log entry can forge a record of its own in journald's stream reader, or drive
    /// a terminal: control characters are escaped, lines are cut below `LineMax=`, and no cut can
    /// leave a `<N>` at the start of a record.
    @Suite struct ForgedLogLineTests {
        /// What journald's stream reader makes of a service's standard error: records end at a
        /// line feed, at a NUL, and after `lineMax` bytes; each record's priority is read from a
        /// leading `<N>` (N from 0 to 7, as `syslog_parse_priority` accepts without a facility).
        static func journaldRecords(_ text: String, lineMax: Int = 48 * 1024) -> [(priority: Int?, text: [UInt8])] {
            var records: [[UInt8]] = []
            var current: [UInt8] = []
            for byte in text.utf8 {
                if byte == UInt8(ascii: "\n") || byte == 0 {
                    records.append(current)
                    current = []
                    continue
                }
                current.append(byte)
                if current.count == lineMax {
                    records.append(current)
                    current = []
                }
            }
            if !current.isEmpty { records.append(current) }
            return records.map { record in
                for width in 1...3 where record.count >= width + 2 && record[0] == UInt8(ascii: "<") {
                    let digits = record[1..<(1 + width)]
                    guard record[1 + width] == UInt8(ascii: ">"),
                        digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                        let value = Int(String(decoding: digits, as: UTF8.self)), value <= 7
                    else { continue }
                    return (value, Array(record[(2 + width)...]))
                }
                return (nil, record)
            }
        }

        /// Messages and metadata values a configuration value could put into a log entry.
        static let hostile: [String] = [
            "value\0<0>forged emergency",
            "value\r<0>forged after a carriage return",
            "value\n<0>forged after a line feed",
            "value\r\n<1>forged after CRLF",
            "value\u{1B}[2J\u{1B}]0;title\u{7}<2>terminal",
            "\u{85}<0>NEL \u{2028}<0>LS \u{2029}<0>PS \u{202E}<0>RLO \u{9B}31m",
            String(repeating: "A", count: 48 * 1024 - 3) + "<0>forged at LineMax",
            String(repeating: "B", count: 48 * 1024 - 10) + "<0>forged a little after LineMax",
            String(repeating: "é", count: 40_000) + "<0>",
            String(repeating: "<0>", count: 30_000),
            String(repeating: "\0<3>", count: 10_000),
        ]

        @Test(
            "no record journald reads carries a priority but the entry's own, whatever LineMax is",
            arguments: [79, 1000, 4096, 48 * 1024])
        func noForgedPriority(lineMax: Int) {
            for text in Self.hostile {
                for (message, metadata) in [
                    (text, [:]), ("m", ["key": Logger.MetadataValue.string(text)]), ("m", [text: "v"]),
                ]
                    as [(String, Logger.Metadata)]
                {
                    let output = LogLineFormatter.prefixed(
                        priority: .informational, message: message, metadata: metadata)
                    for line in output.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
                        #expect(line.utf8.count + 1 <= LogLineFormatter.maximumLineBytes)
                        #expect(line.hasPrefix("<6>"))
                    }
                    let records = Self.journaldRecords(output, lineMax: lineMax)
                    for (index, record) in records.enumerated() {
                        // A record that starts a line has our priority; one cut by LineMax none.
                        #expect(
                            record.priority == 6 || record.priority == nil, "record \(index): \(record.text.prefix(40))"
                        )
                        #expect(!record.text.contains(0))
                        #expect(!record.text.contains(UInt8(ascii: "\r")))
                        #expect(!record.text.contains(0x1B))
                    }
                }
            }
        }

        @Test("control characters are escaped in the message, the metadata and on a terminal")
        func escapesControlCharacters() {
            let text = LogLineFormatter.prefixed(
                priority: .error, message: "a\0b\rc\u{1B}[31md\u{7}e\u{7F}f\u{9B}g\th",
                metadata: ["k\u{1B}y": "v\nw\u{2028}x"])
            #expect(text == #"<3>a\0b\rc\u{1B}[31md\u{7}e\u{7F}f\u{9B}g\th k\u{1B}y=v\nw\u{2028}x"# + "\n")
            let plain = LogLineFormatter.plain(
                timestamp: "T", level: .info, label: "l\u{1B}", message: "one\u{1B}\ntwo\r", metadata: ["a": "\u{7}"])
            #expect(plain == "T info l\\u{1B}: one\\u{1B}\n    two\\r a=\\u{7}\n")
        }

        @Test("a priority prefix inside the text is escaped, other angle brackets are not")
        func priorityPatternsInsideText() {
            let text = LogLineFormatter.prefixed(
                priority: .notice, message: "<0> <12> <123> <1234> <a> <> <redacted> <7", metadata: ["x": "<4>"])
            #expect(text == #"<5>\u{3C}0> \u{3C}12> \u{3C}123> <1234> <a> <> <redacted> <7 x=\u{3C}4>"# + "\n")
        }

        @Test("a line longer than the cap is cut at a character boundary with a marker saying how much")
        func overlongLinesAreCut() throws {
            let message = String(repeating: "é", count: 30_000)  // 60,000 bytes
            let text = LogLineFormatter.prefixed(priority: .warning, message: message, metadata: [:])
            #expect(text.utf8.count <= LogLineFormatter.maximumLineBytes)
            #expect(text.utf8.count >= LogLineFormatter.maximumLineBytes - 1)
            #expect(text.hasPrefix("<4>éé"))
            let match = try #require(text.firstMatch(of: /\ \.\.\.\[(\d+) more bytes cut\]\n$/))
            let omitted = try #require(Int(match.output.1))
            let kept = text.utf8.count - 3 - match.output.0.utf8.count
            #expect(kept + omitted == 60_000)
            #expect(text.split(separator: "\n").count == 1)
            // Short lines are untouched.
            #expect(LogLineFormatter.prefixed(priority: .warning, message: "short", metadata: [:]) == "<4>short\n")
        }

        @Test("the escape format: Swift's literal escapes, idempotent, backslashes kept")
        func escapeFormat() {
            #expect(ControlCharacters.escaped("plain text, ünïcödé, \\n") == "plain text, ünïcödé, \\n")
            #expect(
                ControlCharacters.escaped("\0\t\n\r\u{1}\u{1F}\u{7F}\u{80}\u{9F}\u{A0}")
                    == #"\0\t\n\r\u{1}\u{1F}\u{7F}\u{80}\u{9F}"# + "\u{A0}")
            #expect(
                ControlCharacters.escaped("\u{2028}\u{2029}\u{202A}\u{202E}\u{2066}\u{2069}\u{2027}\u{206A}")
                    == #"\u{2028}\u{2029}\u{202A}\u{202E}\u{2066}\u{2069}"# + "\u{2027}\u{206A}")
            for text in Self.hostile {
                let once = ControlCharacters.escaped(text)
                #expect(ControlCharacters.escaped(once) == once)
                #expect(!ControlCharacters.needsEscaping(in: once))
            }
            #expect(ControlCharacters.escapedKeepingLineFeeds("a\r\nb\nc\rd\u{1B}") == "a\r\nb\nc\\rd\\u{1B}")
        }
    }
#endif
