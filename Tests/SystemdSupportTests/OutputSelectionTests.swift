#if os(Linux)
    import Glibc
    import Testing
    @testable import SystemdSupport

    extension EnvironmentSensitiveTests {
        /// `JournalLogHandler.Output.automatic()`, with a pipe or a pseudo-terminal standing in
        /// for standard error.
        @Suite
        struct OutputSelectionTests {
            private func journalStream(of descriptor: Int32) throws -> String {
                var status = stat()
                guard fstat(descriptor, &status) == 0 else { throw SystemCallError("fstat") }
                return "\(status.st_dev):\(status.st_ino)"
            }

            @Test func journalWhenJournalStreamMatches() throws {
                let pipe = try Pipe()
                let stream = try journalStream(of: pipe.writeEnd)
                ProcessEnvironment.with(["JOURNAL_STREAM": stream, "INVOCATION_ID": "abc"]) {
                    #expect(JournalLogHandler.Output.automatic(standardError: pipe.writeEnd) == .journal)
                }
            }

            @Test func timestampedLinesWhenJournalStreamNamesAnotherFile() throws {
                let pipe = try Pipe()
                let otherPipe = try Pipe()
                let other = try journalStream(of: otherPipe.writeEnd)
                for invocation in [nil, "0123abcd"] {
                    ProcessEnvironment.with(["JOURNAL_STREAM": other, "INVOCATION_ID": invocation]) {
                        #expect(JournalLogHandler.Output.automatic(standardError: pipe.writeEnd) == .stderrPlain)
                    }
                }
            }

            @Test(arguments: ["", "garbage", "1:", ":2", "1:2:3"])
            func malformedJournalStreamIsIgnored(value: String) throws {
                let pipe = try Pipe()
                ProcessEnvironment.with(["JOURNAL_STREAM": value]) {
                    #expect(!JournalLogHandler.Output.isJournalStream(pipe.writeEnd))
                }
            }

            @Test func timestampedLinesOnATerminalAndInAFile() throws {
                let terminal = try PseudoTerminal()
                #expect(isatty(terminal.follower) == 1)
                let file = fopen("/dev/null", "w")!
                defer { fclose(file) }
                for invocation in [nil, "0123abcd"] {
                    ProcessEnvironment.with(["JOURNAL_STREAM": nil, "INVOCATION_ID": invocation]) {
                        #expect(
                            JournalLogHandler.Output.automatic(standardError: terminal.follower) == .stderrPlain)
                        #expect(JournalLogHandler.Output.automatic(standardError: fileno(file)) == .stderrPlain)
                    }
                }
            }
        }
    }

    /// A pseudo-terminal pair, so a test has a descriptor for which `isatty` is true.
    ///
    /// `grantpt`, `unlockpt` and `ptsname` are not exported by Swift's Glibc module, so
    /// they are looked up in the C library at run time.
    private final class PseudoTerminal {
        let leader: Int32
        let follower: Int32

        private typealias DescriptorCall = @convention(c) (Int32) -> Int32
        private typealias NameCall = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

        private static func function<Function>(_ name: String, as type: Function.Type) throws
            -> Function
        {
            guard let library = dlopen(nil, RTLD_NOW), let symbol = dlsym(library, name) else {
                throw SystemCallError("dlsym \(name)", code: ENOSYS)
            }
            return unsafeBitCast(symbol, to: type)
        }

        init() throws {
            let grantpt = try Self.function("grantpt", as: DescriptorCall.self)
            let unlockpt = try Self.function("unlockpt", as: DescriptorCall.self)
            let ptsname = try Self.function("ptsname", as: NameCall.self)
            leader = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard leader >= 0 else { throw SystemCallError("open /dev/ptmx") }
            guard grantpt(leader) == 0, unlockpt(leader) == 0, let name = ptsname(leader) else {
                close(leader)
                throw SystemCallError("grantpt/unlockpt/ptsname")
            }
            follower = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard follower >= 0 else {
                close(leader)
                throw SystemCallError("open pts")
            }
        }

        deinit {
            close(follower)
            close(leader)
        }
    }
#endif
