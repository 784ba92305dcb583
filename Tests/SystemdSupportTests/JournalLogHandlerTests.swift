#if os(Linux)
    import Logging
    import Testing
    @testable import SystemdSupport

    /// `JournalLogHandler` writing native-protocol datagrams to a socket bound by the test.
    @Suite struct JournalLogHandlerTests {
        struct Failure: Error, CustomStringConvertible {
            var description: String { "disk on fire" }
        }

        let receiver: DatagramReceiver
        let control = LogLevelControl(level: .trace)

        init() throws {
            receiver = try DatagramReceiver()
        }

        private func makeLogger(
            label: String = "com.example.test",
            metadataProvider: Logger.MetadataProvider? = nil
        ) -> Logger {
            Logger(label: label) {
                JournalLogHandler(
                    label: $0, identifier: "sd-tests", levelControl: control,
                    output: .socket(receiver.path), metadataProvider: metadataProvider)
            }
        }

        @Test(arguments: [
            (Logger.Level.trace, "7"), (.debug, "7"), (.info, "6"), (.notice, "5"),
            (.warning, "4"), (.error, "3"), (.critical, "2"),
        ])
        func mapsLevelsToSyslogPriorities(level: Logger.Level, priority: String) throws {
            makeLogger().log(level: level, "at \(level)")
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["PRIORITY"] == priority)
            #expect(entry["LOGGER_LEVEL"] == level.rawValue)
            #expect(entry["MESSAGE"] == "at \(level)")
        }

        @Test func writesStandardFieldsFirst() throws {
            let logger = makeLogger()
            logger.info("hello"); let line = #line
            let entry = try #require(try receiver.receiveEntry())
            #expect(
                Array(entry.names.prefix(9)) == [
                    "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
                    "LOGGER_LABEL", "LOGGER_LEVEL", "LOGGER_SOURCE",
                ])
            #expect(entry["MESSAGE"] == "hello")
            #expect(entry["SYSLOG_IDENTIFIER"] == "sd-tests")
            #expect(entry["CODE_LINE"] == String(line))
            #expect(entry["CODE_FILE"]?.hasSuffix("JournalLogHandlerTests.swift") == true)
            #expect(entry["CODE_FUNC"] == "writesStandardFieldsFirst()")
            #expect(entry["LOGGER_LABEL"] == "com.example.test")
            #expect(entry["LOGGER_SOURCE"] == "SystemdSupportTests")
        }

        @Test func sanitizesMetadataNamesAndNeverOverwritesStandardFields() throws {
            makeLogger().warning(
                "with metadata",
                metadata: [
                    "request.id": "42",
                    "_trusted": "no",
                    "9lives": "cat",
                    "message": "not the message",
                    "PRIORITY": "0",
                    "code_line": "1",
                    "MESSAGE_ID": "0b2c7dcbf0f54a08a9d5a4b8d1b0e6f1",
                    "": "empty key",
                ])
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry.values("MESSAGE") == ["with metadata"])
            #expect(entry.values("PRIORITY") == ["4"])
            #expect(entry.values("CODE_LINE").count == 1)
            #expect(entry["REQUEST_ID"] == "42")
            #expect(entry["F__TRUSTED"] == "no")
            #expect(entry["F_9LIVES"] == "cat")
            #expect(entry["META_MESSAGE"] == "not the message")
            #expect(entry["META_PRIORITY"] == "0")
            #expect(entry["META_CODE_LINE"] == "1")
            #expect(entry["MESSAGE_ID"] == "0b2c7dcbf0f54a08a9d5a4b8d1b0e6f1")
            #expect(entry["FIELD"] == "empty key")
            #expect(entry.names.allSatisfy(JournalFieldName.isValid))
        }

        @Test func mergesHandlerProviderAndCallMetadata() throws {
            let provider = Logger.MetadataProvider { ["trace.id": "t-1", "shared": "provider"] }
            var logger = makeLogger(metadataProvider: provider)
            logger[metadataKey: "component"] = "reloader"
            logger[metadataKey: "shared"] = "handler"
            logger.info("merged", metadata: ["shared": "call", "generation": "3"])
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["COMPONENT"] == "reloader")
            #expect(entry["TRACE_ID"] == "t-1")
            #expect(entry["GENERATION"] == "3")
            #expect(entry.values("SHARED") == ["call"])
        }

        @Test func rendersMetadataValuesAsStrings() throws {
            makeLogger().info(
                "values",
                metadata: [
                    "count": "\(7)",
                    "flag": .stringConvertible(true),
                    "map": ["k": "v"],
                    "setting": ["Port=8080", "Banner=two\nlines"],
                    "text": "multi\nline",
                ])
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["COUNT"] == "7")
            #expect(entry["FLAG"] == "true")
            #expect(entry["MAP"] == #"["k": "v"]"#)
            #expect(entry.values("SETTING") == ["Port=8080", "Banner=two\nlines"])
            #expect(entry["TEXT"] == "multi\nline")
        }

        @Test func keepsMultiLineMessages() throws {
            makeLogger().error("first line\nsecond line\n")
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["MESSAGE"] == "first line\nsecond line\n")
            #expect(entry["PRIORITY"] == "3")
        }

        @Test func addsErrors() throws {
            makeLogger().error("failed", error: Failure())
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["ERROR_MESSAGE"] == "disk on fire")
            #expect(entry["ERROR_TYPE"]?.hasSuffix("Failure") == true)
        }

        @Test func writesToStandardErrorWhenTheSocketIsGone() throws {
            let pipe = try Pipe()
            let sink = LogSink.socket(JournalSocketSender(path: receiver.directory + "/missing"))
            let logger = Logger(label: "fallback") {
                JournalLogHandler(
                    label: $0, identifier: nil, levelControl: control, output: .socket("unused"),
                    sink: sink, metadataProvider: nil, fallbackDescriptor: pipe.writeEnd)
            }
            logger.critical("lost?\nno", metadata: ["key": "value"])
            #expect(pipe.readAvailable() == #"<2>lost?\nno key=value"# + "\n")
        }

        @Test func factorySharesTheOutput() throws {
            let factory = JournalLogHandler.factory(
                identifier: "factory-test", levelControl: control, output: .socket(receiver.path))
            let first = Logger(label: "first", factory: factory)
            let second = Logger(label: "second", factory: factory)
            first.info("one")
            second.info("two")
            let entries = [try receiver.receiveEntry(), try receiver.receiveEntry()]
            #expect(entries.map { $0?["LOGGER_LABEL"] } == ["first", "second"])
            #expect(entries.map { $0?["SYSLOG_IDENTIFIER"] } == ["factory-test", "factory-test"])
        }

        @Test func factoryUsesTheGivenMetadataProvider() throws {
            let factory = JournalLogHandler.factory(
                levelControl: control, output: .socket(receiver.path),
                metadataProvider: Logger.MetadataProvider { ["request": "r-9"] })
            Logger(label: "provided", factory: factory).notice("with provider")
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["REQUEST"] == "r-9")
            #expect(entry["PRIORITY"] == "5")
            #expect(entry["SYSLOG_IDENTIFIER"] == JournalLogHandler.defaultIdentifier)
        }
    }
#endif
