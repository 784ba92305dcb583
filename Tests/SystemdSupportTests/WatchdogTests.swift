#if os(Linux)
    import Glibc
    import Testing
    import SystemdSupport

    extension EnvironmentSensitiveTests {
        @Suite
        struct WatchdogTests {
            private let ourPID = String(getpid())
            private let otherPID = getpid() == 1 ? "2" : "1"

            @Test func intervalIsHalfOfWatchdogUsecForOurPID() {
                ProcessEnvironment.with(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": ourPID]) {
                    #expect(SystemdNotifier.watchdogInterval() == .seconds(1))
                }
            }

            @Test func intervalIsNilForAnotherPID() {
                ProcessEnvironment.with(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": otherPID]) {
                    #expect(SystemdNotifier.watchdogInterval() == nil)
                }
            }

            @Test func intervalWithoutWatchdogPIDAppliesToUs() {
                ProcessEnvironment.with(["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": nil]) {
                    #expect(SystemdNotifier.watchdogInterval() == .milliseconds(1500))
                }
            }

            @Test func intervalIsNilWithoutWatchdogUsec() {
                ProcessEnvironment.with(["WATCHDOG_USEC": nil, "WATCHDOG_PID": ourPID]) {
                    #expect(SystemdNotifier.watchdogInterval() == nil)
                }
            }

            @Test func intervalIsNilForInvalidWatchdogUsec() {
                ProcessEnvironment.with(["WATCHDOG_USEC": "soon", "WATCHDOG_PID": ourPID]) {
                    #expect(SystemdNotifier.watchdogInterval() == nil)
                }
            }

            @Test func watchdogDefaultsToTheEnvironmentInterval() {
                ProcessEnvironment.with(["WATCHDOG_USEC": "500000", "WATCHDOG_PID": ourPID]) {
                    #expect(Watchdog().interval == .milliseconds(250))
                }
            }

            @Test func runReturnsAtOnceWithoutInterval() async {
                await Watchdog(interval: nil).run()
            }

            @Test func runPingsUntilCancelled() async throws {
                let receiver = try DatagramReceiver()
                await ProcessEnvironment.with(["NOTIFY_SOCKET": receiver.path]) {
                    let watchdog = Watchdog(interval: .milliseconds(10))
                    let task = Task { await watchdog.run() }
                    #expect(await receiver.nextText() == "WATCHDOG=1")
                    #expect(await receiver.nextText() == "WATCHDOG=1")
                    #expect(await receiver.nextText() == "WATCHDOG=1")
                    task.cancel()
                    await task.value
                }
            }
        }
    }
#endif
