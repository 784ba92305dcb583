import BenchmarkFixtures
import Foundation

/// Everything one run measured, printed as a table or as one JSON object.
struct Report: Sendable {
    var lookup: LookupBenchmark.Results?
    var reloads: [ReloadLatencyBenchmark.Result] = []
    var coldLoads: [ColdLoadBenchmark.Result] = []
    var memory: MemoryBenchmark.Results?
    var interop: InteropBenchmark.Results?
    var soak: SoakBenchmark.Results?
    var hostile: [HostileBenchmark.Result] = []

    // MARK: JSON

    /// One JSON object; figures are grouped by what they measure (`lookup_ns.ours`, …).
    func json() throws -> String {
        var object: [String: Any] = [:]
        if let lookup {
            object["lookup_ns"] = [
                "ours": rounded(lookup.oursFetch),
                "ours_string": rounded(lookup.oursString),
                "swift_configuration": rounded(lookup.swiftConfiguration),
                "dictionary": rounded(lookup.dictionary),
                "ours_two_threads": rounded(lookup.oursFetchTwoThreads),
                "ours_two_threads_own_order": rounded(lookup.oursFetchTwoThreadsOwnOrder),
                "ours_held_two_threads": rounded(lookup.heldFetchTwoThreads),
                "dictionary_two_threads": rounded(lookup.dictionaryTwoThreads),
                "ours_string_two_threads": rounded(lookup.oursStringTwoThreads),
                "ours_during_reloads": rounded(lookup.oursFetchDuringReloads),
                "ours_many_threads": rounded(lookup.oursFetchManyThreads),
                "dictionary_many_threads": rounded(lookup.dictionaryManyThreads),
            ]
            object["lookup_many_threads"] = lookup.manyThreads
            object["lookup_reloads_per_second"] = rounded(lookup.reloadsPerSecond)
        }
        if !reloads.isEmpty {
            for (name, percentile) in [("reload_ms_p50", 50.0), ("reload_ms_p99", 99.0)] {
                object[name] = Dictionary(
                    uniqueKeysWithValues: reloads.map {
                        ($0.contender.rawValue, rounded($0.latencies.percentile(percentile)))
                    })
            }
            object["reload_ms_max"] = Dictionary(
                uniqueKeysWithValues: reloads.map { ($0.contender.rawValue, rounded($0.latencies.max)) })
            object["reload_changes"] = Dictionary(
                uniqueKeysWithValues: reloads.map { ($0.contender.rawValue, $0.latencies.count) })
            object["reload_missed"] = Dictionary(
                uniqueKeysWithValues: reloads.map { ($0.contender.rawValue, $0.missed) })
        }
        if !coldLoads.isEmpty {
            var cold: [String: Double] = [:]
            for result in coldLoads {
                cold["ours_\(result.keyCount)"] = rounded(result.ours.median)
                cold["ours_declared_\(result.keyCount)"] = rounded(result.declared.median)
                cold["dictionary_build_\(result.keyCount)"] = rounded(result.dictionaryBuild.median)
                cold["parse_ours_\(result.keyCount)"] = rounded(result.parse.median)
                cold["parse_foundation_\(result.keyCount)"] = rounded(result.foundationParse.median)
                cold["floor_\(result.keyCount)"] = rounded(result.parseFloor.median)
                if let peer = result.swiftConfiguration {
                    cold["swift_configuration_\(result.keyCount)"] = rounded(peer.median)
                }
            }
            object["cold_ms"] = cold
        }
        if let memory {
            object["memory"] = [
                "keys": memory.keyCount,
                "bytes_per_key_ours": rounded(memory.oursBytesPerKey),
                "bytes_per_key_swift_configuration": rounded(memory.swiftConfigurationBytesPerKey),
                "bytes_per_key_dictionary": rounded(memory.dictionaryBytesPerKey),
                "reloads_few": memory.reloads.few,
                "reloads_many": memory.reloads.many,
                "rss_bytes_after_few_reloads": memory.residentAfterFewReloads,
                "rss_bytes_after_many_reloads": memory.residentAfterManyReloads,
                "heap_bytes_after_few_reloads": memory.heapAfterFewReloads,
                "heap_bytes_after_many_reloads": memory.heapAfterManyReloads,
            ]
        }
        if let interop {
            func figures(_ value: (Statistics) -> Double) -> [String: Double] {
                Dictionary(
                    uniqueKeysWithValues: interop.watches.map { ($0.contender.rawValue, rounded(value($0.latencies))) })
            }
            object["interop"] = [
                "lookup_ns": [
                    "ours_provider": rounded(interop.oursProvider),
                    "swift_configuration_file": rounded(interop.swiftConfigurationFile),
                ],
                "reload_ms_p50": figures(\.median),
                "reload_ms_p99": figures { $0.percentile(99) },
                "reload_ms_max": figures(\.max),
                "reload_changes": Dictionary(
                    uniqueKeysWithValues: interop.watches.map { ($0.contender.rawValue, $0.latencies.count) }),
                "reload_missed": Dictionary(
                    uniqueKeysWithValues: interop.watches.map { ($0.contender.rawValue, $0.missed) }),
            ]
        }
        if let soak {
            func slope(_ value: Double?) -> Any { value.map(rounded) ?? NSNull() }
            object["soak"] = [
                "minutes": soak.minutes,
                "elapsed_s": rounded(soak.elapsedSeconds),
                "reload_path": soak.reloadPath,
                "keys": soak.keyCount,
                "reloads_per_second_target": rounded(soak.targetRate),
                "reloads_per_second": rounded(soak.achievedRate),
                "reloads_requested": soak.reloadsRequested,
                "reloads_applied": soak.reloadsApplied,
                "reloads_unchanged": soak.reloadsUnchanged,
                "reload_failures": soak.reloadFailures,
                "reload_failure_messages": soak.failureMessages,
                "pacing_slots_skipped": soak.slotsSkipped,
                "reload_round_trip_ms": [
                    "p50": rounded(soak.roundTrips.median), "p99": rounded(soak.roundTrips.percentile(99)),
                    "max": rounded(soak.roundTrips.max),
                ],
                "reads": soak.readers.map(\.reads),
                "violations": soak.readers.map(\.violations),
                "violation_messages": soak.readers.flatMap(\.messages),
                "warm_up_s": rounded(soak.warmUpSeconds),
                "samples": soak.samples.map {
                    ["t_s": rounded($0.seconds), "rss_bytes": $0.residentBytes, "heap_bytes": $0.heapBytes]
                },
                "rss_kib_per_minute": slope(soak.slope(\.residentBytes)),
                "heap_kib_per_minute": slope(soak.slope(\.heapBytes)),
                "passed": soak.passed,
            ]
        }
        if !hostile.isEmpty {
            object["hostile"] = hostile.map {
                [
                    "name": $0.name, "file_bytes": $0.fileBytes, "code": $0.code,
                    "reject_ms_median": rounded($0.milliseconds.median), "reject_ms_max": rounded($0.milliseconds.max),
                    "reject_cpu_ms_median": rounded($0.cpuMilliseconds.median),
                    "peak_rss_bytes_above_baseline": $0.peakAboveBaseline,
                ] as [String: Any]
            }
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        return String(decoding: data, as: UTF8.self)
    }

    private func rounded(_ value: Double) -> Double {
        value.isFinite ? (value * 1000).rounded() / 1000 : -1
    }

    // MARK: Table

    /// A readable table: each figure with its target and whether it met it.
    func table() -> String {
        var rows: [[String]] = [["measurement", "value", "target", "met"]]
        func row(_ name: String, _ value: String, _ target: String = "", _ met: Bool? = nil) {
            rows.append([name, value, target, met.map { $0 ? "yes" : "NO" } ?? ""])
        }
        func ns(_ value: Double) -> String { String(format: "%.1f ns", value) }
        func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }
        func ratio(_ value: Double) -> String { String(format: "%.2fx", value) }

        if let lookup {
            rows.append(["Lookup, 100 keys, ns per lookup", "", "", ""])
            row("  [String: String] subscript", ns(lookup.dictionary))
            /// A lookup figure that must stay within `limit` times `base`.
            func atMost(_ name: String, _ value: Double, _ limit: Double, _ base: Double, _ baseName: String) {
                row(
                    name, ns(value), "<= \(limit)x \(baseName) (\(ratio(value / base)))", value <= limit * base)
            }
            atMost("  Environment.shared.fetch", lookup.oursFetch, 1.3, lookup.dictionary, "dictionary")
            atMost(
                "  Environment.shared.get(_:as:default:)", lookup.oursString, 1.3, lookup.dictionary, "dictionary")
            row(
                "  swift-configuration ConfigReader.string(forKey:)", ns(lookup.swiftConfiguration),
                ">= 10x ours (\(ratio(lookup.swiftConfiguration / lookup.oursFetch)))",
                lookup.swiftConfiguration >= 10 * lookup.oursFetch)
            // Threads that read at once slow one another down only by what they share: a read
            // path that writes nothing shared (but the value's reference count, as a dictionary
            // lookup does) scales as the dictionary does, in the same run.
            let dictionaryScaling = lookup.dictionaryTwoThreads / lookup.dictionary
            func scales(_ name: String, _ value: Double, _ single: Double, dictionary: Double) {
                let scaling = value / single
                row(
                    name, ns(value),
                    "<= 1.1x dictionary's \(ratio(dictionary)) (\(ratio(scaling)) its single)",
                    scaling <= 1.1 * dictionary)
            }
            scales(
                "  fetch, 2 threads, same keys at once (each)", lookup.oursFetchTwoThreads, lookup.oursFetch,
                dictionary: dictionaryScaling)
            scales(
                "  string, 2 threads, same keys at once (each)", lookup.oursStringTwoThreads, lookup.oursString,
                dictionary: dictionaryScaling)
            scales(
                "  fetch, 2 threads, each its own order (each)", lookup.oursFetchTwoThreadsOwnOrder, lookup.oursFetch,
                dictionary: dictionaryScaling)
            row(
                "  [String: String], 2 threads, same keys at once (each)", ns(lookup.dictionaryTwoThreads),
                "(\(ratio(dictionaryScaling)) its single)")
            if lookup.manyThreads > 2 {
                let dictionaryManyScaling = lookup.dictionaryManyThreads / lookup.dictionary
                scales(
                    "  fetch, \(lookup.manyThreads) threads, same keys at once (each)", lookup.oursFetchManyThreads,
                    lookup.oursFetch, dictionary: dictionaryManyScaling)
                row(
                    "  [String: String], \(lookup.manyThreads) threads, same keys at once (each)",
                    ns(lookup.dictionaryManyThreads), "(\(ratio(dictionaryManyScaling)) its single)")
            }
            atMost(
                String(format: "  fetch during reloads (%.0f/s applied)", lookup.reloadsPerSecond),
                lookup.oursFetchDuringReloads, 1.5, lookup.oursFetch, "single")
            row("  breakdown: fetch on a held Environment", ns(lookup.heldFetch))
            // Information, not a target: `Environment.shared.fetch` is held to the dictionary's
            // ratio above. A held reference skips the `shared` accessor on one thread, so its own
            // ratio reads higher for the same two-thread time.
            row(
                "  breakdown: the same, 2 threads, same keys at once (each)", ns(lookup.heldFetchTwoThreads),
                "(\(ratio(lookup.heldFetchTwoThreads / lookup.heldFetch)) its single)")
            row("  breakdown: fetch on a held snapshot       ", ns(lookup.snapshotEntry))
        }
        if !reloads.isEmpty {
            rows.append(["Reload latency, rename to observer: p50 / p99 / max (changes)", "", "", ""])
            for result in reloads {
                let stats = result.latencies
                let value =
                    "\(ms(stats.median)) / \(ms(stats.percentile(99))) / \(ms(stats.max)) (\(stats.count)"
                    + (result.missed > 0 ? ", \(result.missed) missed)" : ")")
                if result.contender == .oursInotify {
                    row(
                        "  \(result.contender.title)", value, "p99 < 10 ms",
                        stats.percentile(99) < 10 && result.missed == 0)
                } else {
                    row("  \(result.contender.title)", value)
                }
            }
        }
        if !coldLoads.isEmpty {
            rows.append(["Cold load, XML plist to first value, median", "", "", ""])
            let tenThousand = coldLoads.first { $0.keyCount == 10_000 }
            for result in coldLoads {
                let peer = result.swiftConfiguration.map { " (swift-configuration \(ms($0.median)))" } ?? ""
                var target = ""
                var met: Bool?
                if result.keyCount >= 10_000, let peerMedian = result.swiftConfiguration?.median {
                    target = ">= 5x faster than peer (\(ratio(peerMedian / result.ours.median)))"
                    met = peerMedian >= 5 * result.ours.median
                }
                row("  ours, \(result.keyCount) keys" + peer, ms(result.ours.median), target, met)
                // The floor: reading the file and parsing it, nothing built (issue 55.4).
                let floor = result.parseFloor
                if result.keyCount >= 10_000 {
                    row(
                        "  floor: read + parse (\(floor.parser)), \(result.keyCount) keys", ms(floor.median),
                        "ours <= 2x floor (\(ratio(result.ours.median / floor.median)))",
                        result.ours.median <= 2 * floor.median)
                } else {
                    row("  floor: read + parse (\(floor.parser)), \(result.keyCount) keys", ms(floor.median))
                }
                row(
                    "    parse alone: ours / Foundation's PropertyListSerialization",
                    "\(ms(result.parse.median)) / \(ms(result.foundationParse.median))")
                if result.keyCount == 100_000, let base = tenThousand?.ours.median {
                    row(
                        "  ours, 100000 keys against 10000", ratio(result.ours.median / base),
                        "<= ~10x", result.ours.median <= 10.5 * base)
                }
                if result.keyCount == 10_000 {
                    // Checking every key against a declaration of every key, side by side.
                    let added = result.declared.median / result.ours.median - 1
                    row(
                        "  ours, \(result.keyCount) keys, each declared", ms(result.declared.median),
                        "<= +20% (\(String(format: "%+.0f%%", added * 100)))", added <= 0.20)
                } else {
                    row("  ours, \(result.keyCount) keys, each declared", ms(result.declared.median))
                }
            }
            if let small = tenThousand, let large = coldLoads.first(where: { $0.keyCount == 100_000 }) {
                row(
                    "  floor: build a [String: String], 10000 / 100000 keys",
                    "\(ms(small.dictionaryBuild.median)) / \(ms(large.dictionaryBuild.median))",
                    "(\(ratio(large.dictionaryBuild.median / small.dictionaryBuild.median)))")
            }
        }
        if let interop {
            rows.append(["swift-configuration's ConfigReader over our provider and over its own", "", "", ""])
            row(
                "  string(forKey:) over EnvironmentProvider", ns(interop.oursProvider),
                "<= 1.0x peer (\(ratio(interop.oursProvider / interop.swiftConfigurationFile)))",
                interop.oursProvider <= interop.swiftConfigurationFile)
            row("  string(forKey:) over FileProvider<PropertyListSnapshot>", ns(interop.swiftConfigurationFile))
            for result in interop.watches {
                let stats = result.latencies
                let value =
                    "\(ms(stats.median)) / \(ms(stats.percentile(99))) / \(ms(stats.max)) (\(stats.count)"
                    + (result.missed > 0 ? ", \(result.missed) missed)" : ")")
                let name =
                    "  watchString, rename to value: "
                    + (result.contender == .oursProvider ? "ours" : result.contender.title)
                if result.contender == .oursProvider {
                    row(name, value, "p99 < 10 ms", stats.percentile(99) < 10 && result.missed == 0)
                } else {
                    row(name, value)
                }
            }
        }
        if let memory {
            rows.append(["Memory", "", "", ""])
            row("  bytes per key, ours (\(memory.keyCount) keys)", String(format: "%.0f B", memory.oursBytesPerKey))
            row(
                "  bytes per key, swift-configuration",
                String(format: "%.0f B", memory.swiftConfigurationBytesPerKey))
            row("  bytes per key, [String: String]", String(format: "%.0f B", memory.dictionaryBytesPerKey))
            row(
                "  RSS after \(memory.reloads.few) / \(memory.reloads.many) reloads",
                "\(memory.residentAfterFewReloads / 1024) / \(memory.residentAfterManyReloads / 1024) KiB")
            row(
                "  heap in use after \(memory.reloads.few) / \(memory.reloads.many) reloads",
                "\(memory.heapAfterFewReloads / 1024) / \(memory.heapAfterManyReloads / 1024) KiB")
        }
        if !hostile.isEmpty {
            rows.append([
                "Rejecting a hostile drop-in beside 1,000 keys: reload ms (median / max; CPU median), peak RSS above baseline",
                "", "", "",
            ])
            for result in hostile {
                let peak = Double(result.peakAboveBaseline) / 1e6
                row(
                    "  \(result.name) (\(result.fileBytes / 1024) KiB, \(result.code))",
                    String(
                        format: "%.1f / %.1f ms; CPU %.1f ms; %.1f MB", result.milliseconds.median,
                        result.milliseconds.max, result.cpuMilliseconds.median, peak),
                    result.code == "accepted" ? "(for comparison)" : "CPU < 100 ms, < 50 MB",
                    result.code == "accepted" ? nil : result.cpuMilliseconds.median < 100 && peak < 50)
            }
        }
        if let soak {
            rows.append(["Soak: reloads while \(soak.readers.count) threads read (no targets on timing)", "", "", ""])
            soakRows(soak, row)
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            if row[1].isEmpty && row[2].isEmpty && row[0] != "measurement" { return "\n" + row[0] }
            return zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }

    /// The soak's rows: no targets on timing, only on correctness.
    private func soakRows(_ soak: SoakBenchmark.Results, _ row: (String, String, String, Bool?) -> Void) {
        func kib(_ bytes: Int) -> String { "\(bytes / 1024) KiB" }
        func slope(_ value: Double?) -> String { value.map { String(format: "%+.1f KiB/min", $0) } ?? "n/a" }
        row("  duration (m:ss), keys", "\(SoakBenchmark.clockTime(soak.elapsedSeconds)), \(soak.keyCount)", "", nil)
        row("  reload path", soak.reloadPath, "", nil)
        row(
            "  reloads per second", String(format: "%.1f", soak.achievedRate),
            String(format: "(paced at %.0f/s)", soak.targetRate), nil)
        row(
            "  reloads requested / applied / unchanged",
            "\(soak.reloadsRequested) / \(soak.reloadsApplied) / \(soak.reloadsUnchanged)", "", nil)
        row("  pacing slots skipped (a reload more than 10 ms late)", "\(soak.slotsSkipped)", "", nil)
        let trips = soak.roundTrips
        row(
            "  Reload round trip: p50 / p99 / max",
            String(format: "%.2f / %.2f / %.2f ms", trips.median, trips.percentile(99), trips.max), "", nil)
        row("  failed reloads", "\(soak.reloadFailures)", "0", soak.reloadFailures == 0)
        for message in soak.failureMessages { row("    \(message)", "(failed reload)", "", nil) }
        for (index, reader) in soak.readers.enumerated() {
            row(
                "  reader \(index + 1): reads (per second), generations",
                String(
                    format: "%d (%.0f/s), %llu to %llu", reader.reads,
                    Double(reader.reads) / max(soak.elapsedSeconds, 1e-9), reader.firstGeneration,
                    reader.lastGeneration), "", nil)
        }
        row(
            "  inconsistent reads (A, B, C, one other key, generation order)",
            soak.readers.map { "\($0.violations)" }.joined(separator: " + ") + " = \(soak.violations)", "0",
            soak.violations == 0)
        for message in soak.readers.flatMap(\.messages) { row("    \(message)", "(inconsistent)", "", nil) }
        let samples = soak.samples
        if let first = samples.first, let last = samples.last {
            for (name, value) in [("RSS", \SoakBenchmark.Sample.residentBytes), ("heap in use", \.heapBytes)] {
                row(
                    "  \(name): start / end / max",
                    "\(kib(first[keyPath: value])) / \(kib(last[keyPath: value])) / \(kib(samples.map { $0[keyPath: value] }.max()!))",
                    "", nil)
                row(
                    "  \(name): slope after \(SoakBenchmark.clockTime(soak.warmUpSeconds)) warm-up (\(soak.settledSamples.count) samples)",
                    slope(soak.slope(value)), "", nil)
            }
        }
        row("  memory samples (m:ss: RSS, heap in use)", "", "", nil)
        for sample in samples {
            row(
                "    \(SoakBenchmark.clockTime(sample.seconds))",
                "\(kib(sample.residentBytes)), \(kib(sample.heapBytes))", "", nil)
        }
    }
}
