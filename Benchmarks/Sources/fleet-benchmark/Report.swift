import BenchmarkFixtures
import Foundation

/// What one run measured, printed as a table or as one JSON object.
struct Report {
    var watchers: Int
    var changes: Int
    var members: Int
    /// Whether each fleet wrote its cache on every change.
    var fleetCache: Bool
    /// Whether each service watched its host directory with inotify.
    var watchHostFiles: Bool
    /// Until the slowest of the environments applied each change.
    var slowest: Statistics
    /// Until the fastest of the environments applied each change.
    var fastest: Statistics
    /// Until half of the environments applied each change (the median environment's time).
    var median: Statistics
    /// Until the bare watch received each change, while the environments ran.
    var floor: Statistics
    /// Until the bare watch received each change, with no environment running.
    var floorAlone: Statistics
    /// Until the slowest of as many bare watches as environments received each change, with
    /// no environment running: etcd's fan-out and the watch streams alone.
    var bareSlowest: Statistics
    /// etcd's and this process's use over the measured changes, with the environments.
    var usage: UsageDelta
    /// The same with as many bare watches and no environment.
    var bareUsage: UsageDelta
    /// etcd's counters at the end of the measured changes (curl), with the environments.
    var metrics: EtcdMetrics?
    var bareMetrics: EtcdMetrics?
    /// With every environment watching and nothing published (--idle-seconds).
    var idle: UsageDelta?
    /// For as long, before any watcher started: etcd's own idle CPU.
    var idleBaseline: UsageDelta?
    /// Range calls etcd handled in that time: the watches' keepalive probes.
    var idleRanges: Double?
    /// Puts, lease keepalives and revisions over the measured changes, and while idle (curl).
    var operations: (puts: Double, leaseKeepAlives: Double, revisions: Double)?
    var idleOperations: (puts: Double, leaseKeepAlives: Double, revisions: Double)?
    /// Whether each environment reported its status (--status).
    var status: Bool
    /// With --envctl: ms from the launch of `envctl publish` until every environment applied
    /// the change, and until envctl exited.
    var envctlApplied: Statistics
    var envctlExited: Statistics
    /// This process's soft limit on open files (raised to the hard limit).
    var openFileLimit: UInt64 = 0
    var failures: [String]

    /// The target on the ratio: p99 within this many times the floor's p99.
    static let ratioTarget = 2.0
    /// The target on the environments' p99, in ms.
    static let p99Target = 50.0

    var ratio: Double { slowest.percentile(99) / floor.percentile(99) }
    var ratioToFloorAlone: Double { slowest.percentile(99) / floorAlone.percentile(99) }
    var ratioToBareSlowest: Double { slowest.percentile(99) / bareSlowest.percentile(99) }
    var ratioMet: Bool { ratio <= Self.ratioTarget }
    var p99Met: Bool { slowest.percentile(99) < Self.p99Target }

    func table() -> String {
        func label(_ text: String) -> String { text.padding(toLength: 46, withPad: " ", startingAt: 0) }
        func row(_ name: String, _ statistics: Statistics) -> String {
            label(name)
                + [statistics.percentile(50), statistics.percentile(99), statistics.max].map {
                    String(format: "%9.2f", $0)
                }.joined() + String(format: "%8d", statistics.count)
        }
        func met(_ met: Bool) -> String { met ? "met: yes" : "met: no" }
        var lines = [
            "fleet-benchmark: \(watchers) watching environments in one process, \(changes) changes, "
                + "\(members)-member etcd cluster" + (fleetCache ? "" : ", no fleet cache")
                + (watchHostFiles ? "" : ", host directories not watched")
                + (status ? ", status reported" : ""),
            "each change is one transaction, as envctl publish writes it (after envctl's read and validation)",
            "",
            label("ms from the transaction until") + "   p50 ms   p99 ms   max ms changes",
            row("\(watchers) environments applied (slowest)", slowest),
            row("\(watchers) environments applied (median)", median),
            row("\(watchers) environments applied (fastest)", fastest),
            row("bare watch delivered (floor)", floor),
            row("bare watch alone, no environments", floorAlone),
            row("slowest of \(watchers) bare watches, no environments", bareSlowest),
            "",
            String(format: "p99 / floor p99: %.2fx", ratio),
            String(
                format: "(p99 / p99 of the bare watch alone: %.2fx; of the slowest of \(watchers) bare watches: %.2fx)",
                ratioToFloorAlone, ratioToBareSlowest),
            label(String(format: "target: p99 within %.0fx the floor", Self.ratioTarget)) + met(ratioMet),
            label(String(format: "target: p99 under %.0f ms", Self.p99Target)) + met(p99Met),
        ]
        if envctlApplied.count > 0 {
            lines += [
                "",
                label("ms from the launch of envctl publish until") + "   p50 ms   p99 ms   max ms changes",
                row("\(watchers) environments applied (slowest)", envctlApplied),
                row("envctl exited", envctlExited),
            ]
        }
        lines += [""] + resources()
        lines.append("failures (timeouts, failed transactions): \(failures.count)")
        lines += failures.map { "  \($0)" }
        return lines.joined(separator: "\n")
    }

    /// The lines on etcd's and this process's CPU, memory and connections.
    private func resources() -> [String] {
        func mib(_ kib: Int?) -> String {
            guard let kib else { return "-" }
            return String(format: "%.1f", Double(kib) / 1024)
        }
        func cpu(_ delta: UsageDelta, per count: Double, _ unit: String, _ what: String) -> String {
            let members: [String] = delta.memberCPU.map { String(format: "%.3f", $0) }
            let total = String(format: "%.3f s in %.1f s", delta.clusterCPU, delta.seconds)
            let per = String(format: "%.2f ms", delta.clusterCPU * 1000 / count)
            return "etcd CPU \(what): \(total) (by member: \(members.joined(separator: ", "))); \(per) per \(unit)"
        }
        var memory: [String] = []
        for index in usage.before.members.indices {
            let before = mib(usage.before.members[index]?.residentKiB)
            let after = mib(usage.after.members[index]?.residentKiB)
            let peak = mib(usage.after.members[index]?.peakResidentKiB)
            memory.append("\(before) -> \(after) (\(peak))")
        }
        let connections: [String] = usage.after.connections.map { String($0) }
        let perWatcher = usage.clusterCPU * 1e6 / Double(changes * watchers)
        var lines: [String] = [
            cpu(usage, per: Double(changes), "change", "over the measured changes with \(watchers) environments"),
            String(format: "  per change and watcher: %.1f µs", perWatcher),
        ]
        if let operations {
            lines.append(
                String(
                    format: "  puts (status writes) %.0f, lease keepalives %.0f, revisions %.0f: %.1f puts per change",
                    operations.puts, operations.leaseKeepAlives, operations.revisions,
                    operations.puts / Double(changes)))
        }
        lines += [
            cpu(bareUsage, per: Double(changes), "change", "over the measured changes with \(watchers) bare watches"),
            "etcd memory by member, MiB (VmRSS before -> after the measured changes (VmHWM after)): "
                + memory.joined(separator: ", "),
            "connections to each member's client port: " + connections.joined(separator: ", "),
        ]
        if let metrics {
            let watchers: [String] = metrics.watchers.map { String(Int($0)) }
            let streams: [String] = metrics.watchStreams.map { String(Int($0)) }
            lines.append(
                "etcd watchers by member: \(watchers.joined(separator: ", ")); "
                    + "watch streams: \(streams.joined(separator: ", "))")
        }
        let processCPU = String(
            format: "%.3f s over the measured changes (%.2f ms per change)", usage.benchmarkCPU,
            usage.benchmarkCPU * 1000 / Double(changes))
        let rss = mib(usage.after.benchmark?.residentKiB)
        let hwm = mib(usage.after.benchmark?.peakResidentKiB)
        lines.append(
            "this process: CPU \(processCPU), VmRSS \(rss) MiB, VmHWM \(hwm) MiB; open files limit \(openFileLimit)")
        if let idle {
            lines.append(cpu(idle, per: idle.seconds, "s", "idle (nothing published) with \(watchers) environments"))
            // The watchers' share: what etcd used idle beyond its own idle CPU with no watcher.
            var extra = idle.clusterCPU
            if let idleBaseline {
                lines.append(cpu(idleBaseline, per: idleBaseline.seconds, "s", "idle with no watcher"))
                extra -= idleBaseline.clusterCPU / idleBaseline.seconds * idle.seconds
                lines.append(
                    String(
                        format: "  the watchers' share: %.2f ms per s, %.1f µs per s and watcher",
                        extra * 1000 / idle.seconds, extra * 1e6 / idle.seconds / Double(watchers)))
            }
            if let idleRanges {
                lines.append(
                    String(
                        format: "  reads (keepalive probes) meanwhile: %.0f, %.1f/s; %.1f µs of etcd CPU per read%@",
                        idleRanges, idleRanges / idle.seconds, extra * 1e6 / max(idleRanges, 1),
                        status ? " (the status writes and renewals included)" : ""))
            }
            if let idleOperations {
                lines.append(
                    String(
                        format: "  puts (status writes) %.0f (%.2f/s), lease keepalives %.0f (%.2f/s), revisions %.0f",
                        idleOperations.puts, idleOperations.puts / idle.seconds, idleOperations.leaseKeepAlives,
                        idleOperations.leaseKeepAlives / idle.seconds, idleOperations.revisions))
            }
            lines.append(String(format: "  this process idle: %.3f s CPU in %.1f s", idle.benchmarkCPU, idle.seconds))
            let idleConnections: [String] = idle.after.connections.map { String($0) }
            lines.append("  connections to each member's client port, idle: " + idleConnections.joined(separator: ", "))
            let idleMemory: [String] = idle.after.members.map { mib($0?.residentKiB) }
            lines.append("  etcd VmRSS by member after the idle time, MiB: " + idleMemory.joined(separator: ", "))
        }
        return lines
    }

    func json() throws -> String {
        func figures(_ statistics: Statistics) -> [String: Any] {
            [
                "p50": rounded(statistics.percentile(50)), "p99": rounded(statistics.percentile(99)),
                "max": rounded(statistics.max), "count": statistics.count,
            ]
        }
        var object: [String: Any] = [
            "watchers": watchers, "changes": changes, "members": members, "fleet_cache": fleetCache,
            "environments_applied_slowest_ms": figures(slowest),
            "environments_applied_fastest_ms": figures(fastest),
            "bare_watch_floor_ms": figures(floor),
            "bare_watch_alone_ms": figures(floorAlone),
            "bare_watches_slowest_ms": figures(bareSlowest),
            "ratio_p99_to_floor_p99": rounded(ratio),
            "ratio_p99_to_floor_alone_p99": rounded(ratioToFloorAlone),
            "ratio_p99_to_bare_watches_slowest_p99": rounded(ratioToBareSlowest),
            "targets": [
                "p99_within_2x_floor": ratioMet, "p99_under_50_ms": p99Met,
            ],
            "failures": failures,
            "transaction_like_envctl_publish": true,
            "watch_host_files": watchHostFiles,
            "environments_applied_median_ms": figures(median),
            "etcd": usageObject(usage, bareUsage, metrics: metrics),
            "status": status,
            "open_file_limit": openFileLimit,
        ]
        if let idle {
            var idleObject: [String: Any] = [
                "seconds": rounded(idle.seconds), "cpu_s": rounded(idle.clusterCPU),
                "cpu_s_by_member": idle.memberCPU.map(rounded), "benchmark_cpu_s": rounded(idle.benchmarkCPU),
            ]
            if let idleRanges { idleObject["ranges"] = idleRanges }
            if let idleOperations {
                idleObject["puts"] = idleOperations.puts
                idleObject["lease_keepalives"] = idleOperations.leaseKeepAlives
                idleObject["revisions"] = idleOperations.revisions
            }
            idleObject["vmhwm_kib_after"] = idle.after.members.map { $0?.peakResidentKiB ?? -1 }
            idleObject["connections"] = idle.after.connections
            idleObject["vmrss_kib_after"] = idle.after.members.map { $0?.residentKiB ?? -1 }
            if let idleBaseline {
                idleObject["baseline_cpu_s"] = rounded(idleBaseline.clusterCPU)
                idleObject["baseline_seconds"] = rounded(idleBaseline.seconds)
            }
            object["idle"] = idleObject
        }
        if envctlApplied.count > 0 {
            object["envctl_publish_launch_to_applied_ms"] = figures(envctlApplied)
            object["envctl_publish_launch_to_exit_ms"] = figures(envctlExited)
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private func usageObject(_ usage: UsageDelta, _ bare: UsageDelta, metrics: EtcdMetrics?) -> [String: Any] {
        var object: [String: Any] = [
            "cpu_s": rounded(usage.clusterCPU), "cpu_s_by_member": usage.memberCPU.map(rounded),
            "cpu_ms_per_change": rounded(usage.clusterCPU * 1000 / Double(changes)),
            "bare_watches_cpu_s": rounded(bare.clusterCPU),
            "vmrss_kib_before": usage.before.members.map { $0?.residentKiB ?? -1 },
            "vmrss_kib_after": usage.after.members.map { $0?.residentKiB ?? -1 },
            "vmhwm_kib_after": usage.after.members.map { $0?.peakResidentKiB ?? -1 },
            "connections": usage.after.connections,
            "benchmark_cpu_s": rounded(usage.benchmarkCPU),
            "benchmark_vmrss_kib": usage.after.benchmark?.residentKiB ?? -1,
            "benchmark_vmhwm_kib": usage.after.benchmark?.peakResidentKiB ?? -1,
        ]
        if let operations {
            object["puts"] = operations.puts
            object["lease_keepalives"] = operations.leaseKeepAlives
            object["revisions"] = operations.revisions
        }
        if let metrics {
            object["watchers"] = metrics.watchers
            object["watch_streams"] = metrics.watchStreams
        }
        return object
    }

    /// Three decimals; NaN (no samples) becomes -1, which JSON can hold.
    private func rounded(_ value: Double) -> Double {
        value.isFinite ? (value * 1000).rounded() / 1000 : -1
    }
}
