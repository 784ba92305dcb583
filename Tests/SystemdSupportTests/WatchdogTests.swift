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

            /// Without an interval (no `WATCHDOG_USEC`, or not a positive one), `run()` returns at
            /// once and pings nothing, even with `NOTIFY_SOCKET` set. A `run()` that loops instead
            /// fails here by the bounded wait (it races a 30 s sleep), not by hanging; the time
            /// limit is the last resort.
            @Test(.timeLimit(.minutes(1)), arguments: [nil, .zero, .seconds(-1)] as [Duration?])
            func runReturnsAtOnceWithoutInterval(interval: Duration?) async throws {
                let receiver = try DatagramReceiver()
                let returned = await ProcessEnvironment.with(["NOTIFY_SOCKET": receiver.path]) {
                    await withTaskGroup(of: Bool.self) { group in
                        group.addTask {
                            await Watchdog(interval: interval).run()
                            return true
                        }
                        group.addTask {
                            try? await Task.sleep(for: .seconds(30))
                            return false
                        }
                        let first = await group.next() ?? false
                        group.cancelAll()
                        return first
                    }
                }
                #expect(returned, "run() with interval \(String(describing: interval)) did not return within 30 s")
                #expect(receiver.receiveText(timeout: .zero) == nil, "run() without an interval pinged the watchdog")
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
