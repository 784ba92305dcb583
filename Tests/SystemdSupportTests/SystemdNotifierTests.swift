#if os(Linux)
    import Glibc
    import Testing
    @testable import SystemdSupport

    extension EnvironmentSensitiveTests {
        @Suite
        struct SystemdNotifierTests {
            let receiver: DatagramReceiver
            let notifier = SystemdNotifier()

            init() throws {
                receiver = try DatagramReceiver()
            }

            private func received(_ send: () -> Void) -> String? {
                ProcessEnvironment.with(["NOTIFY_SOCKET": receiver.path]) { send() }
                return receiver.receiveText()
            }

            @Test func readySendsReady() {
                #expect(received { notifier.ready() } == "READY=1")
            }

            @Test func readyWithStatusSendsOneDatagram() {
                #expect(
                    received { notifier.ready(status: "Environment Production") }
                        == "READY=1\nSTATUS=Environment Production")
            }

            @Test func reloadingSendsMonotonicTimeInTheSameDatagram() throws {
                let before = MonotonicClock.nowMicroseconds()
                let text = try #require(received { notifier.reloading() })
                let after = MonotonicClock.nowMicroseconds()

                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.count == 2)
                #expect(lines.first == "RELOADING=1")
                let assignment = try #require(lines.last)
                #expect(assignment.hasPrefix("MONOTONIC_USEC="))
                let microseconds = try #require(UInt64(assignment.dropFirst("MONOTONIC_USEC=".count)))
                #expect(before <= microseconds && microseconds <= after)
            }

            @Test func monotonicClockMatchesClockGettime() {
                var time = timespec()
                clock_gettime(CLOCK_MONOTONIC, &time)
                let reference = UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1_000
                let ours = MonotonicClock.nowMicroseconds()
                #expect(ours >= reference)
                #expect(ours - reference < 60_000_000)
            }

            @Test func reloadingWithStatus() throws {
                let text = try #require(received { notifier.reloading(status: "Reloading\nnow") })
                let lines = text.split(separator: "\n")
                #expect(lines.count == 3)
                #expect(lines.first == "RELOADING=1")
                #expect(lines[1].hasPrefix("MONOTONIC_USEC="))
                #expect(lines.last == #"STATUS=Reloading\nnow"#)
            }

            @Test func stoppingSendsStopping() {
                #expect(received { notifier.stopping() } == "STOPPING=1")
                #expect(received { notifier.stopping(status: "Bye") } == "STOPPING=1\nSTATUS=Bye")
            }

            @Test func statusEscapesControlCharacters() {
                #expect(
                    received { notifier.status("line one\nline two\r\nthree\0\u{1B}[2J\u{7}") }
                        == #"STATUS=line one\nline two\r\nthree\0\u{1B}[2J\u{7}"#)
            }

            @Test func watchdogPingSendsWatchdog() {
                #expect(received { notifier.watchdogPing() } == "WATCHDOG=1")
            }

            @Test func sendKeepsOrderAndSanitizesValues() {
                let text = received {
                    notifier.send([("MAINPID", "42"), ("STATUS", "a\nREADY=1"), ("EXTEND_TIMEOUT_USEC", "5")])
                }
                #expect(text == #"MAINPID=42"# + "\n" + #"STATUS=a\nREADY=1"# + "\n" + "EXTEND_TIMEOUT_USEC=5")
            }

            @Test func reachesAnAbstractNotifySocket() throws {
                let abstractReceiver = try DatagramReceiver(abstract: true)
                ProcessEnvironment.with(["NOTIFY_SOCKET": abstractReceiver.path]) { notifier.ready() }
                #expect(abstractReceiver.receiveText() == "READY=1")
            }

            @Test func isAvailableFollowsNotifySocket() {
                ProcessEnvironment.with(["NOTIFY_SOCKET": receiver.path]) {
                    #expect(notifier.isAvailable)
                }
                ProcessEnvironment.with(["NOTIFY_SOCKET": nil]) {
                    #expect(!notifier.isAvailable)
                }
                ProcessEnvironment.with(["NOTIFY_SOCKET": ""]) {
                    #expect(!notifier.isAvailable)
                }
            }

            @Test func everyCallIsANoOpWithoutNotifySocket() {
                ProcessEnvironment.with(["NOTIFY_SOCKET": nil]) {
                    notifier.ready(status: "x")
                    notifier.reloading(status: "x")
                    notifier.stopping(status: "x")
                    notifier.status("x")
                    notifier.watchdogPing()
                    notifier.send([("READY", "1")])
                }
                #expect(receiver.receive(timeout: .milliseconds(200)) == nil)
            }

            @Test func unreachableSocketDoesNotThrowOrCrash() {
                ProcessEnvironment.with(["NOTIFY_SOCKET": receiver.directory + "/missing"]) {
                    notifier.ready(status: "nobody listens")
                }
                #expect(receiver.receive(timeout: .milliseconds(100)) == nil)
            }
        }
    }
#endif
