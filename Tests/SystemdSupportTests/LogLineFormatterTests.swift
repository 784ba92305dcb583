#if os(Linux)
    import Logging
    import Testing
    @testable import SystemdSupport

    @Suite struct LogLineFormatterTests {
        @Test func prefixesTheSyslogPriority() {
            let line = LogLineFormatter.prefixed(
                priority: .error, message: "could not open file",
                metadata: ["path": "/etc/x", "errno": "2"])
            #expect(line == "<3>could not open file errno=2 path=/etc/x\n")
        }

        @Test func aMultiLineEntryIsOneLine() {
            let text = LogLineFormatter.prefixed(
                priority: .warning, message: "first\nsecond\r\nthird", metadata: ["note": "a\nb"])
            #expect(text == #"<4>first\nsecond\r\nthird note=a\nb"# + "\n")
        }

        @Test func dropsOnlyOneTrailingNewline() {
            #expect(
                LogLineFormatter.prefixed(priority: .informational, message: "x\n", metadata: [:])
                    == "<6>x\n")
            #expect(
                LogLineFormatter.prefixed(priority: .informational, message: "", metadata: [:])
                    == "<6>\n")
        }

        @Test func plainLinesAreReadable() {
            let text = LogLineFormatter.plain(
                timestamp: "2025-01-31T14:05:09.123+0100", level: .notice, label: "daemon",
                message: "reloaded\ndetails", metadata: ["generation": "3"])
            #expect(
                text == "2025-01-31T14:05:09.123+0100 notice daemon: reloaded\n    details generation=3\n")
        }

        @Test func timestampHasMillisecondsAndZone() {
            #expect(isTimestamp(LogTimestamp.now()))
        }

        @Test func priorityPrefixOutputWritesToTheDescriptor() throws {
            let (logger, pipe) = try pipeLogger("pipe", level: .trace, output: .stderrWithPriorityPrefix) {
                .prefixedLines(fileDescriptor: $0)
            }
            logger.notice("started", metadata: ["port": "8080"])
            logger.debug("two\nlines")
            #expect(pipe.readAvailable() == "<5>started port=8080\n<7>two\\nlines\n")
        }

        @Test func plainOutputWritesToTheDescriptor() throws {
            let (logger, pipe) = try pipeLogger("term", level: .info, output: .stderrPlain) {
                .plainLines(fileDescriptor: $0, oneLinePerEntry: false)
            }
            logger.info("hello", metadata: ["a": "1"])
            let text = pipe.readAvailable()
            #expect(text.hasSuffix(" info term: hello a=1\n"))
            #expect(text.split(separator: "\n").count == 1)
        }

        /// In a file or a pipe: a timestamp on every line, one line per entry, no `<N>`.
        @Test func plainOutputInAFileIsOneLinePerEntry() throws {
            let (logger, pipe) = try pipeLogger("file", level: .info, output: .stderrPlain) {
                .plainLines(fileDescriptor: $0, oneLinePerEntry: true)
            }
            logger.info("two\nlines\r\n<0>forged", metadata: ["k": "v\nw"])
            logger.warning("next\n")
            let lines = pipe.readAvailable().split(separator: "\n")
            #expect(lines.count == 2, "\(lines)")
            let prefix = lines[0].wholeMatch(of: /(.+) info file: two\\nlines\\r\\n<0>forged k=v\\nw/)?.1
            #expect(prefix.map { isTimestamp($0) } == true, "\(lines[0])")
            #expect(lines[1].hasSuffix(" warning file: next"), "\(lines[1])")
        }

        /// A logger labelled `label` whose handler, at `level`, writes `output`'s lines through
        /// the sink that `sink` makes for the write end of a new pipe; and that pipe.
        private func pipeLogger(
            _ label: String, level: Logger.Level, output: JournalLogHandler.Output, sink: (_ writeEnd: Int32) -> LogSink
        ) throws -> (Logger, Pipe) {
            let pipe = try Pipe()
            let handler = JournalLogHandler(
                label: label, identifier: nil, levelControl: LogLevelControl(level: level), output: output,
                sink: sink(pipe.writeEnd), metadataProvider: nil)
            return (Logger(label: label) { _ in handler }, pipe)
        }

        /// Whether `text` is a whole timestamp with milliseconds and a zone offset.
        private func isTimestamp(_ text: some StringProtocol) -> Bool {
            String(text).wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}/) != nil
        }
    }
#endif
