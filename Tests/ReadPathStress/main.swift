// The read path, optimized, under ThreadSanitizer: four threads read an environment while the
// main thread reloads it, and every read is checked. Built and run by
// scripts/tsan-read-path.sh (swiftc -O -sanitize=thread, the Environments module compiled in
// with the same flags), because SwiftPM runs the sanitizers on debug builds only, and the read
// path is where the optimizer matters: a snapshot or a string copied out of a read must stay
// valid after the read ends, while reloads replace and free snapshots.
//
//     read-path-stress SECONDS
//
// Every file written has A (integer), B (string), C (integer) and 100 other keys all holding
// the same number n, and n only grows. A reader checks, each round:
//   - one snapshot holds one n in A, B, C and one of the other keys;
//   - single reads (`int`, `string`, the hot path) never go back to a smaller n;
//   - a string read earlier still holds its value after later reads (it outlives its read).
// Exits 1 on any violation or failed reload; ThreadSanitizer's report fails it too.
import Environments
import Foundation
import Locking
import Synchronization

let seconds = Double(CommandLine.arguments.dropFirst().first ?? "10") ?? 10
let otherKeys = 100

func document(_ n: Int) -> String {
    var entries =
        "<key>A</key><integer>\(n)</integer><key>B</key><string>\(n)</string><key>C</key><integer>\(n)</integer>"
    for index in 0..<otherKeys { entries += "<key>K\(index)</key><integer>\(n)</integer>" }
    return """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>Common</key><dict>\(entries)</dict><key>Production</key><dict/></dict></plist>
        """
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("read-path-stress-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let file = directory.appendingPathComponent("Environments.plist")
func write(_ n: Int) throws {
    let temporary = directory.appendingPathComponent(".Environments.plist.tmp")
    try Data(document(n).utf8).write(to: temporary)
    guard rename(temporary.path, file.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
}

try write(0)
let environment = try Environment(
    options: EnvironmentOptions(
        applicationName: "read-path-stress", environment: "Production", configDirectory: directory.path,
        processEnvironment: [:]))

final class Failures: Sendable {
    private let messages = Locked<[String]>([])
    func add(_ message: String) { messages.withLock { if $0.count < 20 { $0.append(message) } } }
    var all: [String] { messages.withLock { $0 } }
}
let failures = Failures()
let stop = Atomic<Bool>(false)
let readers = 4
let done = Atomic<Int>(0)
let totalReads = Atomic<Int>(0)

for reader in 0..<readers {
    let thread = Thread {
        var lastN = 0
        var lastGeneration: UInt64 = 0
        var kept: [String] = []
        var round = 0
        while !stop.load(ordering: .relaxed) {
            round += 1
            let snapshot = environment.snapshot
            let a = snapshot.get("A", default: -1)
            let b = snapshot.get("B", default: "?")
            let c = snapshot.get("C", default: -2)
            let k = snapshot.get("K\(round % otherKeys)", default: -3)
            if String(a) != b || a != c || a != k {
                failures.add("reader \(reader): one snapshot held A=\(a) B=\(b) C=\(c) K=\(k)")
            }
            if snapshot.generation < lastGeneration {
                failures.add("reader \(reader): generation went back from \(lastGeneration) to \(snapshot.generation)")
            }
            lastGeneration = snapshot.generation
            let single = environment.get("A", default: -1)
            let text = (try? environment.require("B", as: String.self)) ?? "?"
            guard let fromText = Int(text), single >= lastN, fromText >= single else {
                failures.add("reader \(reader): single reads A=\(single) then B=\(text) after n=\(lastN)")
                break
            }
            lastN = fromText
            kept.append(text)
            if kept.count == 64 {
                // Strings copied out of reads long ago: still intact, still in order.
                for (earlier, later) in zip(kept, kept.dropFirst()) where Int(earlier)! > Int(later)! {
                    failures.add("reader \(reader): kept strings out of order: \(earlier) before \(later)")
                }
                kept.removeAll(keepingCapacity: true)
            }
        }
        totalReads.add(round, ordering: .relaxed)
        done.add(1, ordering: .releasing)
    }
    thread.start()
}

let started = Date()
var n = 0
var applied = 0
while Date().timeIntervalSince(started) < seconds {
    n += 1
    do {
        try write(n)
        if case .applied = try environment.reload() { applied += 1 }
    } catch {
        failures.add("reload \(n): \(error)")
        break
    }
}
stop.store(true, ordering: .relaxed)
while done.load(ordering: .acquiring) < readers { usleep(1000) }

let all = failures.all
print(
    "read-path-stress: \(n) reloads (\(applied) applied), \(totalReads.load(ordering: .relaxed)) reader rounds, \(readers) readers, \(Int(seconds)) s: \(all.isEmpty ? "no violation" : "\(all.count) violation(s)")"
)
for message in all { print("  \(message)") }
exit(all.isEmpty && applied == n ? 0 : 1)
