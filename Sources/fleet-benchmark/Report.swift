#if Fleet
    import Foundation

    /// What one run measured, and the goals of issue 54 against it.
    struct Report {
        /// One phase: so many hosts of one kind watching, the changes, the idle time.
        struct Phase {
            var name: String
            var hosts: Int
            /// Of them, whole environments.
            var services: Int
            /// By change: ms from just before the transaction until the last host had it.
            var lastArrival: Statistics
            /// Over the measured changes.
            var changes: UsageDelta
            /// Over the idle time.
            var idle: UsageDelta
            /// Before the hosts started, and after the idle time with every host watching.
            var empty: UsageSample
            var full: UsageSample
            /// Range and Maintenance.Status calls the members handled while idle.
            var idleRanges: Double?
            var idleStatuses: Double?
            /// By member: watchers etcd counts, at the end of the idle time.
            var watchers: [Double] = []

            /// Resident memory of all members, then of all proxies, from before the hosts started
            /// until after the idle time, in KiB.
            var memberMemoryGrowth: Double { Self.resident(full.members) - Self.resident(empty.members) }
            var proxyMemoryGrowth: Double { Self.resident(full.proxies) - Self.resident(empty.proxies) }

            private static func resident(_ usages: [ProcessUsage?]) -> Double {
                usages.reduce(0) { $0 + Double($1?.residentKiB ?? 0) }
            }
        }

        var hosts: Int
        var services: Int
        var changes: Int
        var members: Int
        var proxies: Int
        var idleSeconds: Int
        var progressNotifyInterval: Double
        var requestTimeout: Double
        /// The member this client's direct watches used (the bare ones used it too).
        var usedMember: Int
        /// No watch, this client direct, bare direct, then through the proxies if any.
        var phases: [Phase]
        /// `hosts` status puts, all members.
        var statusPuts: UsageDelta
        /// This process's soft limit on open files.
        var openFileLimit: UInt64 = 0
        var failures: [String]

        /// Member CPU per publish, all members, in ms.
        func cpuPerPublish(_ phase: Phase) -> Double { phase.changes.clusterCPU / Double(changes) * 1000 }
        func proxyCPUPerPublish(_ phase: Phase) -> Double { phase.changes.proxiesCPU / Double(changes) * 1000 }
        /// Member CPU per publish and watch beyond the publish alone (the phase without watches), µs;
        /// through proxies, the proxies' CPU counts too (they do the fan-out).
        func cpuPerPublishAndWatch(_ phase: Phase) -> Double {
            guard phase.hosts > 0 else { return .nan }
            return (cpuPerPublish(phase) + proxyCPUPerPublish(phase) - cpuPerPublish(phases[0])) * 1000
                / Double(phase.hosts)
        }
        /// Members' CPU while idle, in cores (CPU seconds a second).
        func idleCores(_ phase: Phase) -> Double { phase.idle.clusterCPU / phase.idle.seconds }
        func idleProxyCores(_ phase: Phase) -> Double { phase.idle.proxiesCPU / phase.idle.seconds }
        /// Member memory per watch, KiB; with the proxies' too.
        func memoryPerWatch(_ phase: Phase) -> Double {
            phase.hosts > 0 ? phase.memberMemoryGrowth / Double(phase.hosts) : .nan
        }
        func proxyMemoryPerWatch(_ phase: Phase) -> Double {
            phase.hosts > 0 ? phase.proxyMemoryGrowth / Double(phase.hosts) : .nan
        }

        /// One goal of issue 54: met or not, with the figures.
        struct Goal {
            var name: String
            var met: Bool
            var measured: String
        }

        /// The goals, this client's watches against the bare ones (`client`, `bare`), or against an
        /// absolute bound.
        func goals(client: Phase, bare: Phase) -> [Goal] {
            let cpu = (cpuPerPublishAndWatch(client), cpuPerPublishAndWatch(bare))
            let memory = (
                memoryPerWatch(client) + proxyMemoryPerWatch(client), memoryPerWatch(bare) + proxyMemoryPerWatch(bare)
            )
            let last = (client.lastArrival.percentile(99), bare.lastArrival.percentile(99))
            let idleGrowth = idleCores(client) - idleCores(phases[0])
            let rangesPerHost = (client.idleRanges ?? .nan) / client.idle.seconds / Double(max(client.hosts, 1))
            return [
                Goal(
                    name: "member CPU per publish and watch within 2x the bare watches'",
                    met: cpu.0 <= 2 * max(cpu.1, 1),
                    measured: String(format: "%.1f µs against %.1f µs", cpu.0, cpu.1) + " (\(ratio(cpu.0, cpu.1)))"),
                Goal(
                    name: "memory per watch (members and proxies) within 2x the bare watches'",
                    met: memory.0 <= 2 * max(memory.1, 1),
                    measured: String(format: "%.1f KiB against %.1f KiB", memory.0, memory.1)
                        + " (\(ratio(memory.0, memory.1)))"),
                Goal(
                    name: "idle: no reads per host", met: (client.idleRanges ?? 1) == 0,
                    measured: String(
                        format: "%.0f Range calls in %.0f s (%.5f a second per host); Status calls %.0f (%.1f/s)",
                        client.idleRanges ?? .nan, client.idle.seconds, rangesPerHost, client.idleStatuses ?? .nan,
                        (client.idleStatuses ?? .nan) / client.idle.seconds)),
                Goal(
                    name: "idle: members' CPU with \(client.hosts) watching within 0.5 core of none",
                    met: idleGrowth <= 0.5,
                    measured: String(
                        format: "%.3f cores against %.3f (+%.3f)", idleCores(client), idleCores(phases[0]), idleGrowth)),
                Goal(
                    name: "publish to the last of \(client.hosts), p99, within 2x the bare watches'",
                    met: last.0 <= 2 * last.1,
                    measured: String(format: "%.0f ms against %.0f ms", last.0, last.1) + " (\(ratio(last.0, last.1)))"),
            ]
        }

        /// `a / b` as "1.23x", or "-" when `b` is too small to divide by (the CPU clock's ticks are
        /// 10 ms: at a few hundred hosts a watch's share rounds to 0).
        private func ratio(_ a: Double, _ b: Double) -> String {
            b > 0.5 ? String(format: "%.2fx", a / b) : "-"
        }

        func text() -> String {
            var lines: [String] = []
            lines.append(
                "fleet-benchmark: \(hosts) hosts a phase (\(services) of this client's whole EnvironmentServices), "
                    + "\(changes) changes after \(FleetBenchmark.warmUpChanges) warm-up, \(members) members (etcd 3.4), "
                    + "\(proxies) grpc-proxy, progress notifications every \(progressNotifyInterval) s, request timeout \(requestTimeout) s, idle \(idleSeconds) s, "
                    + "open files \(openFileLimit)")
            lines.append("direct watches on member \(usedMember + 1) (the one this machine's id picks)")
            let width = 22
            func row(_ label: String, _ values: [String]) {
                let cells = values.map { $0.count >= width ? $0 : String(repeating: " ", count: width - $0.count) + $0 }
                lines.append(label.padding(toLength: 50, withPad: " ", startingAt: 0) + cells.joined(separator: " "))
            }
            let phases = self.phases
            let short = ["no watch", "client direct", "bare direct", "client proxy", "bare proxy"]
            row("", phases.indices.map { short[$0] })
            func ms(_ statistics: Statistics) -> String {
                statistics.count == 0
                    ? "-"
                    : String(
                        format: "%.0f / %.0f / %.0f", statistics.median, statistics.percentile(99), statistics.max)
            }
            row("publish to last arrival p50 / p99 / max ms", phases.map { $0.hosts == 0 ? "-" : ms($0.lastArrival) })
            row("member CPU per publish, all members, ms", phases.map { String(format: "%.1f", cpuPerPublish($0)) })
            row(
                "  and proxies, per watch beyond the publish, µs",
                phases.map { String(format: "%.2f", cpuPerPublishAndWatch($0)) })
            row("proxy CPU per publish, ms", phases.map { String(format: "%.1f", proxyCPUPerPublish($0)) })
            row(
                "member VmRSS growth per watch, KiB",
                phases.map { String(format: "%.1f", memoryPerWatch($0)) })
            row("proxy VmRSS growth per watch, KiB", phases.map { String(format: "%.1f", proxyMemoryPerWatch($0)) })
            row(
                "members' VmRSS with the hosts, MiB",
                phases.map {
                    $0.full.members.map { String(format: "%.0f", Double($0?.residentKiB ?? 0) / 1024) }.joined(
                        separator: ",")
                })
            row("members idle CPU, cores", phases.map { String(format: "%.3f", idleCores($0)) })
            row("proxies idle CPU, cores", phases.map { String(format: "%.3f", idleProxyCores($0)) })
            row(
                "this process idle CPU, cores (the simulated hosts)",
                phases.map { String(format: "%.3f", $0.idle.benchmarkCPU / $0.idle.seconds) })
            row(
                "idle Range / Status calls a second",
                phases.map {
                    String(
                        format: "%.1f / %.1f", ($0.idleRanges ?? .nan) / $0.idle.seconds,
                        ($0.idleStatuses ?? .nan) / $0.idle.seconds)
                })
            row("connections by member", phases.map { $0.full.connections.map(String.init).joined(separator: ",") })
            row(
                "watches in place at the end (etcd)",
                phases.map { $0.watchers.isEmpty ? "-" : String(Int($0.watchers.reduce(0, +))) })
            row("watchers by member (etcd)", phases.map { $0.watchers.map { String(Int($0)) }.joined(separator: ",") })
            row(
                "this process: CPU per publish ms, VmRSS MiB",
                phases.map {
                    String(
                        format: "%.0f, %.0f", $0.changes.benchmarkCPU / Double(changes) * 1000,
                        Double($0.full.benchmark?.residentKiB ?? 0) / 1024)
                })

            let perPut = statusPuts.clusterCPU / Double(hosts) * 1000
            lines.append("")
            lines.append(
                String(
                    format:
                        "status keys: %d puts of 600 bytes took the members %.2f s of CPU (%.3f ms a put, all members). "
                        + "At %d hosts a daemon writes after each change and every 60 s, and renews its lease every 10 s: "
                        + "%d puts a publish (%.1f s of member CPU), %.0f puts and %.0f keepalives a second idle (%.3f cores for the puts)",
                    hosts, statusPuts.clusterCPU, perPut, hosts, hosts, perPut * Double(hosts) / 1000,
                    Double(hosts) / 60,
                    Double(hosts) / 10, perPut * Double(hosts) / 60 / 1000))

            lines.append("")
            if phases.count >= 3 {
                lines.append("Goals (issue 54), this client direct against bare gRPC watches direct:")
                for goal in goals(client: phases[1], bare: phases[2]) {
                    lines.append("  \(goal.met ? "PASS" : "MISS")  \(goal.name): \(goal.measured)")
                }
            }
            if phases.count >= 5 {
                lines.append("The same through grpc-proxy (for information):")
                for goal in goals(client: phases[3], bare: phases[4]) {
                    lines.append("  \(goal.met ? "PASS" : "MISS")  \(goal.name): \(goal.measured)")
                }
            }
            if !failures.isEmpty {
                lines.append("")
                lines.append("FAILURES:")
                lines += failures.map { "  \($0)" }
            }
            return lines.joined(separator: "\n")
        }
    }
#endif
