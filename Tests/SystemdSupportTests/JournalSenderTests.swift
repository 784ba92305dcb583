#if os(Linux)
    import Testing
    import SystemdSupport

    @Suite struct JournalSenderTests {
        @Test func socketSenderDeliversOneDatagramPerEntry() throws {
            let receiver = try DatagramReceiver()
            let sender = JournalSocketSender(path: receiver.path)
            var entry = JournalEntry([("MESSAGE", "Effective configuration")])
            entry.append("CONFIG_SETTING", "Port=8080")
            entry.append("CONFIG_SETTING", "Motd=two\nlines")
            entry.append("BINARY", bytes: [0, 255, 10, 1])
            #expect(sender.send(entry))
            let datagram = try #require(receiver.receive())
            #expect(datagram == JournalNativeProtocol.encode(entry))
            let decoded = try DecodedJournalEntry(datagram: datagram)
            #expect(decoded.values("CONFIG_SETTING") == ["Port=8080", "Motd=two\nlines"])
            #expect(decoded.fields.last?.value == [0, 255, 10, 1])
        }

        @Test func socketSenderReachesAbstractSockets() throws {
            let receiver = try DatagramReceiver(abstract: true)
            #expect(receiver.path.hasPrefix("@"))
            #expect(JournalSocketSender(path: receiver.path).send([("MESSAGE", "abstract")]))
            #expect(receiver.receiveText() == "MESSAGE=abstract\n")
        }

        @Test func socketSenderReportsAMissingReceiver() throws {
            let receiver = try DatagramReceiver()
            let sender = JournalSocketSender(path: receiver.directory + "/missing")
            #expect(!sender.send([("MESSAGE", "nobody listens")]))
        }

        @Test func socketSenderRejectsPathsTooLongForAUnixSocket() {
            let sender = JournalSocketSender(path: "/tmp/" + String(repeating: "x", count: 200))
            #expect(!sender.send([("MESSAGE", "x")]))
        }

        @Test func journalSendReportsWhetherTheJournalIsThere() {
            let delivered = Journal.send([("MESSAGE", "SystemdSupportTests probe"), ("PRIORITY", "7")])
            #expect(delivered == Journal.isAvailable)
        }

        @Test func journalSendAcceptsAnEmptyEntry() {
            #expect(Journal.send(JournalEntry()))
        }
    }
#endif
