import Environments
import Foundation
import TestSupport
import Testing

/// A dotted key at the top of a section (`Database.Host`) is the same path as nested
/// dictionaries, in every layer (keys inside dictionaries are literal: ``LiteralKeyTests``):
/// across layers the higher one wins, as for any other key; within one set of values (a
/// file's section, the defaults, one override) a path set both ways is an error naming both
/// keys. The answer never depends on the order in which a hashed dictionary lists its keys:
/// each test builds its configuration many times, with the keys written in shuffled orders.
@Suite struct DottedKeyTests {
    /// How many times each configuration is built, with keys in a new order each time.
    static let rounds = 40

    @Test("a dotted key in a higher layer overrides the nested path, and the reverse")
    func higherLayerWins() throws {
        try withTemporaryDirectory { directory in
            for round in 0..<Self.rounds {
                var random = SplitMix(seed: UInt64(round))
                try directory.write(
                    "Environments.plist",
                    text: ShuffledPlist.xml(
                        [
                            "Common": [
                                "Database": ["Host": "common-nested", "Port": 5432], "Cache.Host": "common-dotted",
                            ],
                            "Debug": ["Database.Host": "debug-dotted", "Cache": ["Host": "debug-nested"]],
                            "Secrets": ["Database.Password"],
                        ], filler: round, using: &random))
                try directory.write(
                    "Environments.plist.d/10-site.plist",
                    text: ShuffledPlist.xml(
                        ["Common": ["Database.Password": "drop-in-dotted", "Queue": ["Depth": 3]]], filler: round,
                        using: &random))
                let environment = try Environment(
                    options: directory.options(defaults: ["Database": ["Password": "default-nested"], "Queue.Depth": 1])
                )
                let snapshot = environment.snapshot
                #expect(
                    (try? environment.require("Database.Host", as: String.self)) == "debug-dotted", "round \(round)")
                #expect(environment.get("Database.Port", default: 0) == 5432, "round \(round)")
                #expect((try? environment.require("Cache.Host", as: String.self)) == "debug-nested", "round \(round)")
                #expect(
                    (try? environment.require("Database.Password", as: String.self)) == "drop-in-dotted",
                    "round \(round)")
                #expect(environment.get("Queue.Depth", default: 0) == 3, "round \(round)")
                #expect(snapshot.configuredValue(forKey: "Database.Password")?.isSecret == true)
                #expect(snapshot.configuredValue(forKey: "Database.Password")?.displayValue() == "<redacted>")
                #expect(snapshot.configuredValue(forKey: "Database.Host")?.source.section == "Debug")
                // One path, one entry: listings show each key once, and the dictionary holds all.
                for key in ["Database.Host", "Database.Password", "Cache.Host", "Queue.Depth"] {
                    #expect(snapshot.leafKeys.filter { $0 == key }.count == 1, "round \(round): \(key)")
                }
                #expect(!snapshot.values.keys.contains { $0.contains(".") })
                #expect(
                    snapshot.value(forKey: "Database")
                        == .dictionary(["Host": "debug-dotted", "Port": 5432, "Password": "drop-in-dotted"]))
            }
        }
    }

    @Test("Instances and overrides: dotted and nested keys are one path; the later override wins")
    func instancesAndOverrides() throws {
        try withTemporaryDirectory { directory in
            for round in 0..<Self.rounds {
                var random = SplitMix(seed: UInt64(1000 + round))
                try directory.write(
                    "Environments.plist",
                    text: ShuffledPlist.xml(
                        [
                            "Common": ["HTTP": ["Port": 80, "Host": "localhost"]],
                            "Debug": ["HTTP.Port": 81],
                            "Instances": ["eu": ["HTTP": ["Port": 82]], "us": ["HTTP.Port": 83]],
                        ], filler: round, using: &random))
                for (instance, port) in [("eu", 82), ("us", 83)] {
                    var options = directory.options()
                    options.instance = instance
                    let environment = try Environment(options: options)
                    #expect(environment.get("HTTP.Port", default: 0) == port, "round \(round), \(instance)")
                    #expect(environment.snapshot.leafKeys.filter { $0 == "HTTP.Port" }.count == 1)

                    try environment.setOverride(["Port": 90], forKey: "HTTP")
                    #expect(environment.get("HTTP.Port", default: 0) == 90)
                    #expect((try? environment.require("HTTP.Host", as: String.self)) == "localhost")
                    try environment.setOverride(91, forKey: "HTTP.Port")
                    #expect(environment.get("HTTP.Port", default: 0) == 91)
                    // Set again, the dictionary goes last and wins.
                    try environment.setOverride(["Port": 92], forKey: "HTTP")
                    #expect(environment.get("HTTP.Port", default: 0) == 92)
                    // Removing it leaves the dotted one.
                    try environment.setOverride(nil, forKey: "HTTP")
                    #expect(environment.get("HTTP.Port", default: 0) == 91)
                    #expect(environment.snapshot.leafKeys.filter { $0 == "HTTP.Port" }.count == 1)
                }
            }
        }
    }

    @Test("a path set both nested and dotted in one section is an error naming both keys and lines")
    func ambiguityInOneSection() throws {
        let cases: [(section: [String: Any], key: String, mentions: [String])] = [
            (
                ["Database": ["Host": "a"], "Database.Host": "b"], "Database.Host",
                ["'Database.Host'", "'Database' > 'Host'"]
            ),
            (["Database": "a", "Database.Host": "b"], "Database.Host", ["'Database.Host'", "'Database'"]),
            (["A.B": ["C": 1], "A": ["B": ["C": 2]]], "A.B.C", ["'A.B' > 'C'", "'A' > 'B' > 'C'"]),
        ]
        try withTemporaryDirectory { directory in
            for (index, example) in cases.enumerated() {
                var first: String?
                for round in 0..<Self.rounds {
                    var random = SplitMix(seed: UInt64(round))
                    let file = try directory.write(
                        "Environments.plist",
                        text: ShuffledPlist.xml(["Common": ["Other": 1], "Debug": example.section], using: &random))
                    let error = try #require(throws: EnvironmentError.self) {
                        try Environment(options: directory.options())
                    }
                    #expect(error.code == .invalidSection, "case \(index)")
                    #expect(error.key == example.key, "case \(index): \(error)")
                    #expect(error.file == file)
                    #expect(error.line != nil, "case \(index): \(error)")
                    #expect(error.message.contains("the environment 'Debug' in this file"), "\(error)")
                    for mention in example.mentions {
                        #expect(error.message.contains(mention), "case \(index): \(error)")
                    }
                    #expect(error.message.components(separatedBy: "(line ").count == 3, "case \(index): \(error)")
                    // The same message, whatever the order of the keys.
                    let text = error.message.replacingOccurrences(
                        of: #"line \d+"#, with: "line", options: .regularExpression)
                    if let first { #expect(text == first, "case \(index)") } else { first = text }
                }
            }
            // In a drop-in, the drop-in's code.
            try directory.writeXML(["Debug": ["Other": 1]])
            try directory.writeXML(["Common": ["X": ["Y": 1], "X.Y": 2]], to: "Environments.plist.d/10.plist")
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(error.code == .invalidDropIn)
            #expect(error.message.contains("Common in this drop-in"), "\(error)")
        }
    }

    @Test("the exact lines of both keys")
    func lines() throws {
        try withTemporaryDirectory { directory in
            try directory.write(
                "Environments.plist",
                text: plistDocument(
                    """
                        <key>Debug</key>
                        <dict>
                            <key>Database</key>
                            <dict>
                                <key>Host</key>
                                <string>a</string>
                            </dict>
                            <key>Database.Host</key>
                            <string>b</string>
                        </dict>
                    """))
            let error = try #require(throws: EnvironmentError.self) { try Environment(options: directory.options()) }
            #expect(
                error.message.hasPrefix(
                    "'Database.Host' is set twice in the environment 'Debug' in this file: by 'Database' > 'Host' (line 8) and by 'Database.Host' (line 11)"
                ), "\(error.message)")
            #expect(error.line == 11)
        }
    }

    @Test("without ambiguity nothing is an error: an empty dictionary, disjoint dotted and nested keys")
    func noAmbiguity() throws {
        let environment = try Environment(values: [
            "A": .dictionary([:]), "A.B": 1, "C": ["D": 1], "C.E": 2, "F.G": ["H.I": 3], "F": ["J": 4],
        ])
        #expect(environment.get("A.B", default: 0) == 1)
        #expect(environment.snapshot.value(forKey: "C") == .dictionary(["D": 1, "E": 2]))
        #expect(environment.get(#"F.G."H.I""#, default: 0) == 3)
        #expect(environment.get("F.G.H.I", default: 0) == 0)
        #expect(environment.get("F.J", default: 0) == 4)
        // Two empty dictionaries at one path are one.
        let empty = try Environment(values: ["P.Q": .dictionary([:]), "P": ["Q": .dictionary([:])]])
        #expect(empty.snapshot.value(forKey: "P") == .dictionary(["Q": .dictionary([:])]))
        // Dictionaries inside arrays are values: their keys stay as written.
        let arrays = try Environment(values: ["List": [["a.b": 1]]])
        #expect(arrays.snapshot.value(forKey: "List") == .array([.dictionary(["a.b": 1])]))
    }

    @Test("random sets of dotted and nested keys: the same values, or the same error, whatever the order")
    func randomSets() throws {
        let names = ["A", "B", "A.B", "B.A", "A.A", "A.B.A"]
        var random = SplitMix(seed: 7)
        var errors = 0
        for _ in 0..<300 {
            // A random set of three or four keys, each a scalar, an empty dictionary or a
            // dictionary with one random key.
            var values: [String: SettingValue] = [:]
            for _ in 0..<Int.random(in: 3...4, using: &random) {
                let key = names.randomElement(using: &random) ?? "A"
                switch Int.random(in: 0..<3, using: &random) {
                case 0: values[key] = .integer(Int.random(in: 0..<9, using: &random))
                case 1: values[key] = .dictionary([:])
                default: values[key] = .dictionary([names.randomElement(using: &random) ?? "A": 1])
                }
            }
            var first: Result<[String: SettingValue], EnvironmentError>?
            for _ in 0..<8 {
                // A new dictionary each time, built in a new order.
                var copy: [String: SettingValue] = [:]
                for (key, value) in values.shuffled(using: &random) { copy[key] = value }
                let result = Result { () throws(EnvironmentError) in try Environment(values: copy).snapshot.values }
                if let first {
                    #expect(result == first, "\(values)")
                } else {
                    first = result
                    if case .failure = result { errors += 1 }
                }
            }
        }
        // Both kinds of outcome were seen.
        #expect(errors > 20 && errors < 280, "\(errors) errors")
    }

    @Test("the defaults and an override are one set of values each: a path set twice there is an error")
    func ambiguityInDefaultsAndOverrides() throws {
        let error = try #require(throws: EnvironmentError.self) {
            try Environment(values: ["Database": ["Host": "a"], "Database.Host": "b"])
        }
        #expect(error.message.contains("the defaults"), "\(error)")
        #expect(error.key == "Database.Host")

        // An override's key is a path; the keys of its dictionary are literal.
        let environment = try Environment(values: ["A": 1])
        try environment.setOverride(["B.C": 1, "B": ["C": 2]], forKey: "X")
        #expect(environment.get(#"X."B.C""#, default: 0) == 1)
        #expect(environment.get("X.B.C", default: 0) == 2)
        let overrideError = try #require(throws: EnvironmentError.self) {
            try environment.setOverride(1, forKey: "X..Y")
        }
        #expect(overrideError.code == .invalidKey, "\(overrideError)")
        #expect(overrideError.message.contains("the override of 'X..Y'"), "\(overrideError)")
        #expect(environment.get("A", default: 0) == 1)
    }

    @Test("Secrets and RestartRequired name a path however it is written")
    func secretsAndRestartRequired() throws {
        try withTemporaryDirectory { directory in
            try directory.writeXML([
                "Common": ["Login": ["Token": "t1"], "HTTP.Port": 80],
                "Secrets": ["Login.Token"], "RestartRequired": ["HTTP.Port"], "Debug": [:],
            ])
            let environment = try Environment(options: directory.options())
            #expect(environment.snapshot.configuredValue(forKey: "Login.Token")?.displayValue() == "<redacted>")
            // The same values, written the other way: nothing changes, nothing waits.
            try directory.writeXML([
                "Common": ["Login.Token": "t1", "HTTP": ["Port": 80]],
                "Secrets": ["Login.Token"], "RestartRequired": ["HTTP.Port"], "Debug": [:],
            ])
            #expect(try environment.reload().snapshot.generation == 1)
            #expect(environment.snapshot.configuredValue(forKey: "Login.Token")?.displayValue() == "<redacted>")
            // A new port, written dotted in a higher layer, waits.
            try directory.writeXML([
                "Common": ["Login.Token": "t1", "HTTP": ["Port": 80]],
                "Secrets": ["Login.Token"], "RestartRequired": ["HTTP.Port"], "Debug": ["HTTP.Port": 81],
            ])
            try environment.reload()
            #expect(environment.get("HTTP.Port", default: 0) == 80)
            #expect(environment.snapshot.pendingRestart["HTTP.Port"]?.value == .integer(81))
        }
    }
}

/// XML property lists with every dictionary's keys in a shuffled order, and optionally some
/// filler keys (which change the dictionaries' sizes, and so their layout).
enum ShuffledPlist {
    static func xml(_ root: [String: Any], filler: Int = 0, using random: inout SplitMix) -> String {
        var root = root
        var common = root["Common"] as? [String: Any] ?? [:]
        for index in 0..<filler % 13 { common["Filler\(index)"] = index }
        if !common.isEmpty { root["Common"] = common }
        var lines = [#"<?xml version="1.0" encoding="UTF-8"?>"#, #"<plist version="1.0">"#]
        render(root, indent: "", into: &lines, using: &random)
        lines.append("</plist>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func render(_ value: Any, indent: String, into lines: inout [String], using random: inout SplitMix) {
        switch value {
        case let text as String:
            lines.append("\(indent)<string>\(text)</string>")
        case let number as Int:
            lines.append("\(indent)<integer>\(number)</integer>")
        case let values as [Any]:
            lines.append("\(indent)<array>")
            for element in values { render(element, indent: indent + "  ", into: &lines, using: &random) }
            lines.append("\(indent)</array>")
        case let values as [String: Any]:
            lines.append("\(indent)<dict>")
            for key in values.keys.sorted().shuffled(using: &random) {
                lines.append("\(indent)  <key>\(key)</key>")
                render(values[key] ?? "", indent: indent + "  ", into: &lines, using: &random)
            }
            lines.append("\(indent)</dict>")
        default:
            lines.append("\(indent)<string>\(value)</string>")
        }
    }
}
