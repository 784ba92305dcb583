import BenchmarkFixtures
import Environments
import Foundation

/// What it costs a running configuration to reject a hostile drop-in: one whose interpolation
/// would grow without bound (keys that double each other, a fan-out of a long value, copies of
/// a long value that together exceed the whole-configuration cap) or a chain of references
/// deep enough to overflow a recursive resolver. Each is written beside a good configuration
/// and reloaded (`Environment.reload()`, what every reload path of the daemon runs); the
/// reload must be rejected, and the time it took and the peak resident memory above the
/// process's baseline are reported (targets: under 100 ms, under 50 MB).
struct HostileBenchmark {
    struct Result: Sendable {
        var name: String
        /// The drop-in's size.
        var fileBytes: Int
        /// The error's code, as the rejection reported it.
        var code: String
        var milliseconds: Statistics
        /// The same reloads in CPU time of the thread that ran them: on a shared machine, wall
        /// time also counts the waits for a core.
        var cpuMilliseconds: Statistics
        /// The most the resident set grew above its level before the reload, over the rounds.
        var peakAboveBaseline: Int
    }

    let rounds: Int
    /// The length of the reference chain (the stack overflowed at tens of thousands).
    let chainLength: Int

    /// Each drop-in's `Release` section, by name, and whether a reload must reject it: the
    /// hostile ones, and for comparison a valid one as large as the longest (what reading a
    /// file of that many keys costs anyway).
    var cases: [(name: String, values: [String: String], rejected: Bool)] {
        var doubling = ["A1": "x"]
        for index in 2...30 { doubling["A\(index)"] = "${A\(index - 1)}${A\(index - 1)}" }

        // A 1 KiB value referred to 100,000 times by one value.
        let fanOut = ["K": String(repeating: "k", count: 1024), "Wide": String(repeating: "${K}", count: 100_000)]

        // Forty keys, each a copy of a value just under 1 MiB: 40 MiB in all.
        var copies = ["K": String(repeating: "k", count: 1000), "Big": String(repeating: "${K}", count: 1000)]
        for index in 0..<40 { copies["Copy\(index)"] = "${Big}" }

        // A chain of references, its last key the top of the doubling.
        var chain = doubling
        chain["K0"] = "${A30}"
        for index in 1..<chainLength { chain["K\(index)"] = "${K\(index - 1)}" }

        // The same chain closed into a cycle.
        var cycle: [String: String] = ["K0": "${K\(chainLength - 1)}"]
        for index in 1..<chainLength { cycle["K\(index)"] = "${K\(index - 1)}" }

        // For comparison: as many keys, valid, with and without references.
        var valid: [String: String] = ["K0": "end"]
        for index in 1..<chainLength { valid["K\(index)"] = "${K\(index - 1)}" }
        var plain: [String: String] = [:]
        for index in 0..<chainLength { plain["K\(index)"] = "K\(index + 1)" }
        // Key paths (issue 31.1): one dotted key far past the depth cap (once a stack overflow),
        // many keys past it, and for comparison keys at the cap and as many flat keys of the
        // same bytes (memory and time must stay linear in the file: compare the last two).
        let component = "Level000"
        let maximumDepth = 64  // the most components a key path may have (Limits.md)
        func path(_ depth: Int, _ index: Int) -> String {
            (Array(repeating: component, count: depth - 1) + ["K\(index)"]).joined(separator: ".")
        }
        let oneDeep = [Array(repeating: component, count: 100_000).joined(separator: "."): "x"]
        var pastCap: [String: String] = [:]
        for index in 0..<2_000 { pastCap[path(maximumDepth + 1, index)] = "x" }
        var atCap: [String: String] = [:]
        for index in 0..<2_000 { atCap[path(maximumDepth, index)] = "x" }
        var flat: [String: String] = [:]
        let flatKey = String(repeating: "k", count: path(maximumDepth, 0).utf8.count - 6)
        for index in 0..<2_000 { flat[flatKey + String(format: "%06d", index)] = "x" }
        return [
            ("one key of 100000 components", oneDeep, true),
            ("2000 keys of \(maximumDepth + 1) components", pastCap, true),
            ("(valid: 2000 keys of \(maximumDepth) components)", atCap, false),
            ("(valid: 2000 flat keys, the same bytes)", flat, false),
            ("doubling, 30 keys", doubling, true), ("fan-out, 100000 references to 1 KiB", fanOut, true),
            ("40 copies of 1 MB", copies, true), ("chain of \(chainLength) to the doubling", chain, true),
            ("cycle of \(chainLength)", cycle, true),
            ("(valid: chain of \(chainLength) to a literal)", valid, false),
            ("(valid: \(chainLength) plain keys)", plain, false),
        ]
    }

    func run(progress: (String) -> Void) throws -> [Result] {
        let directory = try Fixtures.makeDirectory("hostile")
        try Fixtures.environmentsPlist(Fixtures.settings(1_000)).write(
            to: URL(fileURLWithPath: directory + "/Environments.plist"))
        let dropIns = directory + "/Environments.plist.d"
        try FileManager.default.createDirectory(atPath: dropIns, withIntermediateDirectories: true)
        let dropIn = dropIns + "/50-hostile.plist"
        let environment = try Environment(options: Fixtures.options(directory))
        var generation = environment.snapshot.generation
        var results: [Result] = []
        for (name, values, rejected) in cases {
            progress("hostile: \(name), \(rounds) reloads")
            let data = try PropertyListSerialization.data(
                fromPropertyList: ["Release": values], format: .xml, options: 0)
            var timings: [Double] = []
            var cpuTimings: [Double] = []
            var peak = 0
            var code = ""
            for _ in 0..<rounds {
                try? FileManager.default.removeItem(atPath: dropIn)
                try data.write(to: URL(fileURLWithPath: dropIn))
                let baseline = Resident.current
                Resident.resetPeak()
                let start = ContinuousClock.now
                let cpuStart = Self.threadCPUTime()
                do {
                    _ = try environment.reload()
                    code = "accepted"
                } catch {
                    code = error.code.description
                }
                timings.append((ContinuousClock.now - start).milliseconds)
                cpuTimings.append((Self.threadCPUTime() - cpuStart) * 1e3)
                peak = max(peak, Resident.peak - baseline)
                guard (code == "accepted") != rejected else {
                    throw BenchmarkError("hostile: '\(name)' was \(rejected ? "not " : "")rejected")
                }
                if rejected {
                    guard environment.snapshot.generation == generation else {
                        throw BenchmarkError("hostile: '\(name)' changed the configuration")
                    }
                } else {
                    try FileManager.default.removeItem(atPath: dropIn)
                    _ = try environment.reload()
                    generation = environment.snapshot.generation
                }
            }
            results.append(
                Result(
                    name: name, fileBytes: data.count, code: code, milliseconds: Statistics(timings),
                    cpuMilliseconds: Statistics(cpuTimings), peakAboveBaseline: peak))
        }
        try? FileManager.default.removeItem(atPath: dropIn)
        return results
    }
}

extension HostileBenchmark {
    /// Seconds of CPU time the calling thread has used.
    static func threadCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The process's resident set, from /proc/self/status.
enum Resident {
    /// VmRSS, in bytes.
    static var current: Int { field("VmRSS:") }
    /// VmHWM, the peak since the last ``resetPeak()``, in bytes.
    static var peak: Int { field("VmHWM:") }

    /// Sets the peak to the current resident set (Linux 4.0 and later).
    static func resetPeak() {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return }
        _ = write(descriptor, "5", 1)
        close(descriptor)
    }

    private static func field(_ name: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }),
            let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kibibytes * 1024
    }
}
