// libFuzzer target for key paths (SettingPath, SectionKeys, the variable layer): the one
// bounded type every surface makes paths with.
//
// The input is lines of text (readable in the corpus):
//   p TEXT           a path's text form: parsed, it must round-trip (its description parses to
//                    the same components, and the components give the same description) and
//                    stay within the bounds; refused, the error must be `invalidKey`; where the
//                    one-pass split of a path without quotes answers, the scalar walk agrees
//   k KEY=VALUE      a key at the top of `Common` (a path: dots and quotes are syntax)
//   n KEY/A/B=VALUE  a key at the top of `Common` holding nested dictionaries A, B (literal keys)
//   v NAME=VALUE     the variable APP_NAME (`__` separates levels)
//   s PATH           a `Secrets` entry
// Every line's text, and each key, is also a key of a `SettingIndex` (the snapshot's table),
// which must find exactly what a Swift dictionary of the same keys finds, for each of those
// texts and for each with its last byte changed (ASCII or not, canonically equivalent
// spellings included).
// For every input, loading must end without crashing (libFuzzer's -timeout and memory limits
// catch a cost without a bound: a deep or long key, thousands of variables); when it loads,
// every listed key must read back, parse to itself and stay within the bounds, every value
// below a secret (matched ignoring case) must be secret, and building again from the keys in
// another order must give the same values or the same error.
// Built by Fuzz/run.sh with all of Sources/Environments (and swift-log), so internals are visible.

import Foundation

/// libFuzzer calls this with each input; a failed check ends the process.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeys(_ pointer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: pointer, count: size), as: UTF8.self)
    var common: [(String, SettingValue)] = []
    var variables: [String: String] = [:]
    var secrets: Set<String> = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
        let body = String(line.dropFirst(2))
        switch line.first {
        case "p": checkPath(body)
        case "k", "n":
            let parts = body.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = SettingValue.string(parts.count > 1 ? String(parts[1]) : "")
            if line.first == "k" {
                common.append((String(parts[0]), value))
            } else {
                let keys = parts[0].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                var nested = value
                for key in keys.dropFirst().reversed() { nested = .dictionary([key: nested]) }
                common.append((keys[0], nested))
            }
        case "v":
            let parts = body.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            variables["APP_" + parts[0]] = parts.count > 1 ? String(parts[1]) : ""
        case "s": secrets.insert(body)
        default: break
        }
    }
    checkIndex(text.split(separator: "\n", omittingEmptySubsequences: true).map { String($0.dropFirst(2)) })
    let first = load(common, variables: variables, secrets: secrets)
    // The same keys inserted in another order (a dictionary's layout, and so the order it
    // lists them in, follows the order of insertion where hashes collide).
    var firstOccurrences: [(String, SettingValue)] = []
    var seen: Set<String> = []
    for entry in common where seen.insert(entry.0).inserted { firstOccurrences.append(entry) }
    let second = load(firstOccurrences.reversed(), variables: variables, secrets: secrets)
    switch (first, second) {
    case (.success(let a), .success(let b)):
        guard a.values == b.values else { fatalError("the order of the keys changed the values") }
        check(a, secrets: secrets)
    case (.failure(let a), .failure(let b)):
        guard a.message == b.message else { fatalError("the order of the keys changed the error: \(a) / \(b)") }
    default:
        fatalError("the order of the keys changed whether the configuration loads")
    }
    return 0
}

/// A `SettingIndex` of `keys` finds what a Swift dictionary finds, for the keys and near misses.
private func checkIndex(_ keys: [String]) {
    var table: [String: SettingEntry] = [:]
    for (position, key) in keys.enumerated() where table[key] == nil {
        table[key] = SettingEntry(value: .integer(position), sourceIndex: 0, isSecret: false)
    }
    let index = SettingIndex(table)
    guard index.count == table.count else { fatalError("the index holds \(index.count) keys, not \(table.count)") }
    for key in keys {
        for probe in [key, String(key.dropLast()) + "\u{301}", String(key.dropLast()) + "z", key + "."] {
            guard index[probe] == table[probe] else {
                fatalError("the index and a dictionary disagree on \(probe.debugDescription)")
            }
        }
    }
}

private func checkPath(_ text: String) {
    // The one-pass split of a plain path and the scalar walk agree wherever the first answers.
    if let plain = SettingPath.plainComponents(text) {
        guard let walked = try? SettingPath.parseScalars(text), walked.components == plain, walked.canonical == text
        else { fatalError("the plain split and the scalar walk disagree on \(text)") }
    }
    do {
        let path = try SettingPath(parsing: text)
        guard path.components.count <= SettingPath.maximumDepth,
            path.description.utf8.count <= SettingPath.maximumBytes,
            path.components.allSatisfy({ $0.utf8.count <= SettingPath.maximumComponentBytes })
        else { fatalError("a path past the bounds: \(text)") }
        guard try SettingPath(parsing: path.description) == path,
            try SettingPath(components: path.components).description == path.description
        else { fatalError("the text form does not round-trip: \(text) -> \(path.description)") }
    } catch {
        guard error.code == .invalidKey else { fatalError("\(text): \(error.code), expected invalidKey") }
    }
}

private func load(_ common: [(String, SettingValue)], variables: [String: String], secrets: Set<String>)
    -> Result<EnvironmentSnapshot, EnvironmentError>
{
    var section: [String: SettingValue] = [:]
    // The first of two equal keys (the input may repeat one), whatever the order given.
    for (key, value) in common where section[key] == nil { section[key] = value }
    let options = EnvironmentOptions(
        environment: "Test", build: BuildInfo(defaultEnvironment: "Test"), processEnvironment: variables,
        secretKeys: secrets)
    return Result { () throws(EnvironmentError) in
        try Environment(environments: ["Common": .dictionary(section), "Test": .dictionary([:])], options: options)
            .snapshot
    }
}

private func check(_ snapshot: EnvironmentSnapshot, secrets: Set<String>) {
    let folded = secrets.compactMap { try? SettingPath(parsing: $0).components.map { $0.lowercased() } }
    for key in snapshot.leafKeys {
        guard let path = try? SettingPath(parsing: key), path.description == key else {
            fatalError("a listed key is not canonical: \(key)")
        }
        guard let entry = snapshot.configuredValue(forKey: key) else { fatalError("\(key) does not read back") }
        let lowered = path.components.map { $0.lowercased() }
        if folded.contains(where: { lowered.starts(with: $0) }), !entry.isSecret {
            fatalError("\(key) is below a secret but not secret")
        }
    }
}
