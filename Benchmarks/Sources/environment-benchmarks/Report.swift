import Foundation

/// Everything one run measured, printed as a table or as one JSON object.
struct Report: Sendable {
    var lookup: LookupBenchmark.Results?
    var reloads: [ReloadLatencyBenchmark.Result] = []
    var coldLoads: [ColdLoadBenchmark.Result] = []
    var memory: MemoryBenchmark.Results?
    var interop: InteropBenchmark.Results?

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
                "dictionary_two_threads": rounded(lookup.dictionaryTwoThreads),
                "ours_string_two_threads": rounded(lookup.oursStringTwoThreads),
                "ours_during_reloads": rounded(lookup.oursFetchDuringReloads),
            ]
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
                cold["dictionary_build_\(result.keyCount)"] = rounded(result.dictionaryBuild.median)
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
                "  Environment.shared.string(_:default:)", lookup.oursString, 1.3, lookup.dictionary, "dictionary")
            row(
                "  swift-configuration ConfigReader.string(forKey:)", ns(lookup.swiftConfiguration),
                ">= 10x ours (\(ratio(lookup.swiftConfiguration / lookup.oursFetch)))",
                lookup.swiftConfiguration >= 10 * lookup.oursFetch)
            atMost(
                "  fetch, 2 threads, same keys at once (each)", lookup.oursFetchTwoThreads, 1.5, lookup.oursFetch,
                "single")
            atMost(
                "  string, 2 threads, same keys at once (each)", lookup.oursStringTwoThreads, 1.5, lookup.oursString,
                "single")
            atMost(
                "  fetch, 2 threads, each its own order (each)", lookup.oursFetchTwoThreadsOwnOrder, 1.5,
                lookup.oursFetch, "single")
            row(
                "  [String: String], 2 threads, same keys at once (each)", ns(lookup.dictionaryTwoThreads),
                "(\(ratio(lookup.dictionaryTwoThreads / lookup.dictionary)) its single)")
            atMost(
                String(format: "  fetch during reloads (%.0f/s applied)", lookup.reloadsPerSecond),
                lookup.oursFetchDuringReloads, 1.5, lookup.oursFetch, "single")
            row("  breakdown: fetch on a held Environment", ns(lookup.heldFetch))
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
                if result.keyCount == 10_000, let peerMedian = result.swiftConfiguration?.median {
                    target = ">= 2x faster than peer (\(ratio(peerMedian / result.ours.median)))"
                    met = peerMedian >= 2 * result.ours.median
                } else if result.keyCount == 100_000, let base = tenThousand?.ours.median {
                    target = "<= ~10x 10,000 keys (\(ratio(result.ours.median / base)))"
                    met = result.ours.median <= 10.5 * base
                }
                row("  ours, \(result.keyCount) keys" + peer, ms(result.ours.median), target, met)
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
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            if row[1].isEmpty && row[2].isEmpty && row[0] != "measurement" { return "\n" + row[0] }
            return zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression)
        }.joined(separator: "\n")
    }
}
