// The interpolation fuzzer's input: a configuration as lines of text, readable in the corpus.
//
//   Database/Host=db.${env:DOMAIN}      a string at a key path ("/" separates dictionaries;
//                                       "." is part of a key, as in a plist's <key>)
//   i:Database/Port=5432                an integer (also r: real, b: boolean, x: data)
//   a:Mirrors=https://${Host}/a|b       an array of strings ("|" separates them)
//   d:Servers=Host>${Host}|Port>80      an array holding one dictionary of strings
//   !env DOMAIN=example.com             a process environment variable
//   !secret Database                    a Secrets entry
//   !nocredentials                      no $CREDENTIALS_DIRECTORY
//
// Otherwise $CREDENTIALS_DIRECTORY is a directory this process fills with `credentials` once.

import Foundation

struct FuzzInput {
    var tree: [String: SettingNode] = [:]
    var environment: [String: String] = [:]
    var secrets: Set<String> = []
    var hasCredentials = true

    /// The credential files, as interpolation must read them (one trailing line break dropped).
    static let credentials: [String: String] = [
        "db-password": "s3cret", "api-token": "tok", "two-lines": "line1\nline2\n", "plain": "plain",
        "reference": "${NotExpanded}", "empty": "",
    ]

    /// The files behind `credentials`, with the line breaks systemd's LoadCredential= may leave.
    private static let directory: String = {
        let files = [
            "db-password": "s3cret\n", "api-token": "tok\r\n", "two-lines": "line1\nline2\n\n", "plain": "plain",
            "reference": "${NotExpanded}\n", "empty": "",
        ]
        let directory = NSTemporaryDirectory() + "interpolation-fuzzer-\(getpid())"
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, text) in files {
            precondition(FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(text.utf8)))
        }
        atexit { try? FileManager.default.removeItem(atPath: FuzzInput.directory) }
        return directory
    }()

    init(_ text: String) {
        var values: [String: SettingValue] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("!env ") {
                let (name, value) = Self.split(line.dropFirst(5))
                environment[name] = value ?? ""
            } else if line.hasPrefix("!secret ") {
                secrets.insert(String(line.dropFirst(8)))
            } else if line == "!nocredentials" {
                hasCredentials = false
            } else {
                var kind: Character = "s"
                var body = line
                if line.count > 2, line.dropFirst().first == ":", "irbxad".contains(line.first!) {
                    kind = line.first!
                    body = line.dropFirst(2)
                }
                let (path, text) = Self.split(body)
                guard let text, let value = Self.value(kind, text) else { continue }
                Self.insert(value, at: path.split(separator: "/", omittingEmptySubsequences: false), into: &values)
            }
        }
        environment[EnvironmentOptions.credentialsDirectoryVariable] = hasCredentials ? Self.directory : nil
        SettingTree.merge(
            values, into: &tree,
            source: ValueSource(layer: .common, file: "/etc/fuzz/Environments.plist", section: "Common"))
    }

    /// `name=value` split at the first `=`.
    private static func split(_ line: Substring) -> (String, String?) {
        guard let equals = line.firstIndex(of: "=") else { return (String(line), nil) }
        return (String(line[..<equals]), String(line[line.index(after: equals)...]))
    }

    private static func value(_ kind: Character, _ text: String) -> SettingValue? {
        switch kind {
        case "i": return Int(text).map(SettingValue.integer)
        case "r": return Double(text).flatMap { $0.isFinite ? .real($0) : nil }
        case "b": return .bool(text == "true")
        case "x": return .data(Data(text.utf8))
        case "a":
            return .array(text.split(separator: "|", omittingEmptySubsequences: false).map { .string(String($0)) })
        case "d":
            var dictionary: [String: SettingValue] = [:]
            for pair in text.split(separator: "|") {
                let (key, value) = split(pair.replacing(">", with: "=", maxReplacements: 1))
                dictionary[key] = .string(value ?? "")
            }
            return .array([.dictionary(dictionary)])
        default: return .string(text)
        }
    }

    private static func insert(_ value: SettingValue, at path: [Substring], into values: inout [String: SettingValue]) {
        let key = String(path[0])
        guard path.count > 1 else {
            values[key] = value
            return
        }
        var children: [String: SettingValue] = [:]
        if case .dictionary(let existing)? = values[key] { children = existing }
        insert(value, at: Array(path.dropFirst()), into: &children)
        values[key] = .dictionary(children)
    }
}
