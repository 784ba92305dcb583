#if Fleet
    import Foundation

    #if canImport(Glibc)
        import Glibc
    #endif

    /// What one process had used at one moment, from `/proc/PID/stat` and `/proc/PID/status`.
    struct ProcessUsage: Sendable {
        /// User and system CPU time since it started, in seconds.
        var cpuSeconds: Double
        /// Resident memory now (`VmRSS`), in KiB.
        var residentKiB: Int
        /// The most resident memory so far (`VmHWM`), in KiB.
        var peakResidentKiB: Int

        /// The clock ticks per second of `/proc/PID/stat`'s times.
        private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

        /// The usage of process `pid` (`"self"` for this one), or `nil` if it is gone.
        init?(pid: String) {
            guard let stat = readProcFile("/proc/\(pid)/stat"), let status = readProcFile("/proc/\(pid)/status"),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm) ": state is field 3, utime 14 and stime 15 (man 5 proc).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            cpuSeconds = (user + system) / Self.ticksPerSecond
            func kibibytes(_ name: String) -> Int {
                for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                    // "VmRSS:\t   12345 kB"
                    let words = line.dropFirst(name.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
                    return Int(words.first ?? "") ?? 0
                }
                return 0
            }
            residentKiB = kibibytes("VmRSS")
            peakResidentKiB = kibibytes("VmHWM")
        }
    }

    /// The usage of every etcd member and of this process at one moment, and the connections each
    /// member's client port has open.
    struct UsageSample: Sendable {
        var instant: ContinuousClock.Instant
        /// By member, in the cluster's order; `nil` for a member that is not running.
        var members: [ProcessUsage?]
        /// The grpc-proxy processes given, in their order.
        var proxies: [ProcessUsage?]
        /// This process.
        var benchmark: ProcessUsage?
        /// By member: TCP connections established to its client port (from `/proc/net/tcp`).
        var connections: [Int]

        init(_ cluster: LocalEtcdCluster, proxies: [LocalEtcdCluster.Proxy] = []) {
            instant = .now
            let members = cluster.members
            self.members = members.map { ProcessUsage(pid: String($0.processIdentifier)) }
            self.proxies = proxies.map { ProcessUsage(pid: String($0.processIdentifier)) }
            benchmark = ProcessUsage(pid: "self")
            let established = Self.establishedLocalPorts()
            connections = members.map { established[$0.clientPort, default: 0] }
        }

        /// How many established TCP connections (IPv4 and IPv6) have each local port.
        private static func establishedLocalPorts() -> [Int: Int] {
            var counts: [Int: Int] = [:]
            for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
                guard let text = readProcFile(file) else { continue }
                for line in text.split(separator: "\n").dropFirst() {
                    // "sl local_address rem_address st ...": local "HEXADDR:HEXPORT", state 01 = established.
                    let fields = line.split(separator: " ")
                    guard fields.count > 3, fields[3] == "01", let colon = fields[1].lastIndex(of: ":"),
                        let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16)
                    else { continue }
                    counts[port, default: 0] += 1
                }
            }
            return counts
        }
    }

    /// What etcd and this process used between two samples.
    struct UsageDelta: Sendable {
        var seconds: Double
        /// By member: CPU seconds used between the samples.
        var memberCPU: [Double]
        /// By proxy: CPU seconds used between the samples.
        var proxyCPU: [Double]
        var benchmarkCPU: Double
        var before: UsageSample
        var after: UsageSample

        init(from before: UsageSample, to after: UsageSample) {
            self.before = before
            self.after = after
            seconds = (after.instant - before.instant).milliseconds / 1000
            memberCPU = zip(before.members, after.members).map { old, new in
                guard let old, let new else { return .nan }
                return new.cpuSeconds - old.cpuSeconds
            }
            proxyCPU = zip(before.proxies, after.proxies).map { old, new in
                guard let old, let new else { return .nan }
                return new.cpuSeconds - old.cpuSeconds
            }
            benchmarkCPU = (after.benchmark?.cpuSeconds ?? .nan) - (before.benchmark?.cpuSeconds ?? .nan)
        }

        /// CPU seconds of all members together.
        var clusterCPU: Double { memberCPU.reduce(0, +) }
        /// CPU seconds of all proxies together.
        var proxiesCPU: Double { proxyCPU.reduce(0, +) }
    }

    /// etcd's own counters, from each member's `/metrics` (read with curl, when it is installed).
    struct EtcdMetrics: Sendable {
        /// By member: watchers (`etcd_debugging_mvcc_watcher_total`).
        var watchers: [Double]
        /// By member: watch streams (`etcd_debugging_mvcc_watch_stream_total`).
        var watchStreams: [Double]
        /// By member: Range calls handled (`grpc_server_handled_total{grpc_method="Range"}`).
        var ranges: [Double]
        /// By member: Maintenance.Status calls handled (the watches' look at their member's leader).
        var statuses: [Double]
        /// By member: Put calls received (`grpc_server_msg_received_total{grpc_method="Put"}`): the
        /// status reports' writes.
        var puts: [Double]
        /// By member: lease keepalive messages received (`grpc_method="LeaseKeepAlive"`): the
        /// status leases' renewals.
        var leaseKeepAlives: [Double]
        /// The cluster's revision (`etcd_debugging_mvcc_current_revision`, the highest of the
        /// members').
        var revision: Double

        static let curl = "/usr/bin/curl"

        /// The counters of every member, or `nil` without curl or when a member did not answer.
        static func read(_ cluster: LocalEtcdCluster) -> EtcdMetrics? {
            guard FileManager.default.isExecutableFile(atPath: curl) else { return nil }
            var metrics = EtcdMetrics(
                watchers: [], watchStreams: [], ranges: [], statuses: [], puts: [], leaseKeepAlives: [], revision: 0)
            for member in cluster.members {
                guard let text = fetch(member.endpoint + "/metrics") else { return nil }
                func value(_ prefix: String, _ containing: String = "") -> Double {
                    var sum = 0.0
                    for line in text.split(separator: "\n")
                    where line.hasPrefix(prefix) && (containing.isEmpty || line.contains(containing)) {
                        sum += Double(line.split(separator: " ").last ?? "") ?? 0
                    }
                    return sum
                }
                metrics.watchers.append(value("etcd_debugging_mvcc_watcher_total "))
                metrics.watchStreams.append(value("etcd_debugging_mvcc_watch_stream_total "))
                metrics.ranges.append(value("grpc_server_handled_total{", "grpc_method=\"Range\""))
                metrics.statuses.append(value("grpc_server_handled_total{", "grpc_method=\"Status\""))
                metrics.puts.append(value("grpc_server_msg_received_total{", "grpc_method=\"Put\""))
                metrics.leaseKeepAlives.append(
                    value("grpc_server_msg_received_total{", "grpc_method=\"LeaseKeepAlive\""))
                metrics.revision = max(metrics.revision, value("etcd_debugging_mvcc_current_revision "))
            }
            return metrics
        }

        /// Status writes, lease renewals and revisions from `self` to `later`, all members.
        func operations(until later: EtcdMetrics) -> (puts: Double, leaseKeepAlives: Double, revisions: Double) {
            (
                later.puts.reduce(0, +) - puts.reduce(0, +),
                later.leaseKeepAlives.reduce(0, +) - leaseKeepAlives.reduce(0, +), later.revision - revision
            )
        }

        private static func fetch(_ url: String) -> String? {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: curl)
            process.arguments = ["-s", "-m", "5", url]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch { return nil }
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
        }
    }

    /// The whole of a file in /proc, which says it is empty (a size of 0): read until the end, as
    /// Foundation's readers may stop after the first page.
    func readProcFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Raises this process's limit on open files to `wanted` (etcd members and proxies started
    /// afterwards inherit it): each host holds one connection, so 10,000 hosts need 10,000
    /// descriptors here and as many in the member or proxy they use. Raising the hard limit needs
    /// root (CAP_SYS_RESOURCE); otherwise the soft limit goes up to the hard one (`ulimit -n`).
    /// Returns the soft limit in force.
    func raiseOpenFileLimit(to wanted: UInt64) -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_max < rlim_t(wanted) {
            var raised = limit
            raised.rlim_cur = rlim_t(wanted)
            raised.rlim_max = rlim_t(wanted)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return wanted }
        }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
#endif
