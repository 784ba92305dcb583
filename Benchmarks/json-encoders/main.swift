// Encoding the control socket's replies, side by side in one process: the package's
// JSONValueEncoder followed by JSONValue.jsonText() (what VarlinkCoding.encode does) against
// Foundation's JSONEncoder with sorted keys (the same text). Built and run by
// Benchmarks/json-encoders.sh; prints medians and ratios.
import Foundation
import JSONText

struct Source: Codable { var layer: String; var file: String?; var section: String? }
struct Setting: Codable { var key: String; var value: String?; var type: String; var secret: Bool; var source: Source }
struct Describe: Codable {
    var environment: String
    var generation: Int
    var files: [String]
    var settings: [Setting]
}
struct Verdict: Codable {
    var outcome: String
    var environment: String
    var trigger: String
    var generation: Int
    var changedKeys: [String]
    var startedMonotonicUSec: Int
    var finishedMonotonicUSec: Int
}

func describe(settings: Int) -> Describe {
    Describe(
        environment: "Production", generation: 42, files: ["/etc/app/Environments.plist"],
        settings: (0..<settings).map { index in
            Setting(
                key: "Section\(index / 50).Key\(index)",
                value: index % 7 == 0 ? nil : "https://api.example.com/v\(index)",
                type: "string", secret: index % 7 == 0,
                source: Source(layer: "environment", file: "/etc/app/Environments.plist", section: "Production"))
        })
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15
}

let runs = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 7
let foundation = JSONEncoder()
foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
var sink = 0

print("reply                         ours ms  JSONEncoder ms  JSONEncoder/ours")
func compare(_ label: String, _ body: (_ ours: Bool) throws -> Int) rethrows {
    var ours: [Double] = []
    var theirs: [Double] = []
    for _ in 0..<runs {
        ours.append(try measure { sink &+= try body(true) })
        theirs.append(try measure { sink &+= try body(false) })
    }
    let (o, f) = (median(ours), median(theirs))
    print(String(format: "%-28@ %8.2f  %14.2f  %16.2f×", label as NSString, o, f, f / o))
}

for settings in [1_000, 10_000] {
    let record = describe(settings: settings)
    try compare("Describe, \(settings) settings") { ours in
        ours ? try JSONValueEncoder().encode(record).jsonText().count : try foundation.encode(record).count
    }
}
let verdict = Verdict(
    outcome: "applied", environment: "Production", trigger: "control", generation: 7, changedKeys: ["LogLevel"],
    startedMonotonicUSec: 1_000_000, finishedMonotonicUSec: 1_000_900)
try compare("10,000 Reload verdicts") { ours in
    var total = 0
    for _ in 0..<10_000 {
        total += ours ? try JSONValueEncoder().encode(verdict).jsonText().count : try foundation.encode(verdict).count
    }
    return total
}
// A record as varlink parameters ([String: JSONValue]): the encoder straight into the tree,
// against JSONEncoder's text decoded back by JSONDecoder.
let decoder = JSONDecoder()
try compare("10,000 verdicts as parameters") { ours in
    var total = 0
    for _ in 0..<10_000 {
        let value: JSONValue =
            ours
            ? try JSONValueEncoder().encode(verdict)
            : try decoder.decode(JSONValue.self, from: foundation.encode(verdict))
        if case .object(let members) = value { total += members.count }
    }
    return total
}
let describe1000 = describe(settings: 1_000)
try compare("Describe 1000 as parameters") { ours in
    let value: JSONValue =
        ours
        ? try JSONValueEncoder().encode(describe1000)
        : try decoder.decode(JSONValue.self, from: foundation.encode(describe1000))
    if case .object(let members) = value { return members.count }
    return 0
}
// A parameters tree as message text (what VarlinkCoding.encode does with a reply).
let tree = try JSONValueEncoder().encode(describe1000)
try compare("Describe 1000 tree as text") { ours in
    ours ? tree.jsonText().count : try foundation.encode(tree).count
}
// Both make the same text (sorted keys), so the comparison is of equal work.
let sample = describe(settings: 3)
let ourText = String(decoding: try JSONValueEncoder().encode(sample).jsonText(), as: UTF8.self)
let theirText = String(decoding: try foundation.encode(sample), as: UTF8.self)
print(ourText == theirText ? "same text: yes" : "same text: NO\n\(ourText)\n\(theirText)")
if sink == 42 { print(sink) }
