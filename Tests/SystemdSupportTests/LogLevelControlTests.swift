#if os(Linux)
    import Logging
    import Testing
    @testable import SystemdSupport

    @Suite struct LogLevelControlTests {
        @Test(arguments: Logger.Level.allCases)
        func storesEveryLevel(level: Logger.Level) {
            let control = LogLevelControl(level: .critical)
            control.level = level
            #expect(control.level == level)
        }

        @Test func defaultsToInfo() {
            #expect(LogLevelControl().level == .info)
        }

        @Test func changesTheLevelOfExistingLoggers() throws {
            let receiver = try DatagramReceiver()
            let control = LogLevelControl(level: .info)
            let logger = Logger(label: "level") {
                JournalLogHandler(label: $0, levelControl: control, output: .socket(receiver.path))
            }
            #expect(logger.logLevel == .info)
            logger.debug("dropped")
            logger.info("kept")
            #expect(try receiver.receiveEntry()?["MESSAGE"] == "kept")

            control.level = .debug
            #expect(logger.logLevel == .debug)
            logger.debug("now visible")
            #expect(try receiver.receiveEntry()?["MESSAGE"] == "now visible")

            control.level = .error
            logger.warning("dropped again")
            logger.error("an error")
            #expect(try receiver.receiveEntry()?["MESSAGE"] == "an error")
        }

        @Test func levelSetOnALoggerOverridesTheControlForThatLoggerOnly() throws {
            let receiver = try DatagramReceiver()
            let control = LogLevelControl(level: .info)
            let factory = JournalLogHandler.factory(
                levelControl: control, output: .socket(receiver.path))
            var pinned = Logger(label: "pinned", factory: factory)
            let following = Logger(label: "following", factory: factory)
            pinned.logLevel = .error

            control.level = .trace
            #expect(pinned.logLevel == .error)
            #expect(following.logLevel == .trace)
            pinned.info("dropped")
            following.trace("trace entry")
            let entry = try #require(try receiver.receiveEntry())
            #expect(entry["LOGGER_LABEL"] == "following")
            #expect(entry["MESSAGE"] == "trace entry")
        }

        @Test func sharedControlIsTheDefault() {
            let handler = JournalLogHandler(label: "shared", output: .stderrPlain)
            #expect(handler.levelControl === LogLevelControl.shared)
        }
    }
#endif
