import Foundation
import TestSupport
import Testing

@testable import Environments

/// Real property lists from public repositories (Tests/PlistCorpus, with their sources and
/// licences in sources.json), read by our loader.
///
/// `scripts/plist-corpus-compare.py` runs this test with `PLIST_CORPUS_OUTPUT` set: every file's
/// tree (or error) is written there in a canonical form, which the script compares value by
/// value with what Python's `plistlib` reads. Without it, this checks that every file is read or
/// refused with an error, never a crash.
@Suite(.blocking) struct PlistCorpusTests {
    private static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("PlistCorpus")

    @Test func readsEveryFileOfTheCorpus() throws {
        let manifest = try Data(contentsOf: Self.corpus.appendingPathComponent("sources.json"))
        let sources = try #require(
            (try JSONSerialization.jsonObject(with: manifest) as? [String: Any])?["sources"] as? [[String: Any]])
        var results: [String: Any] = [:]
        var read = 0
        for source in sources {
            let directory = try #require(source["directory"] as? String)
            for path in try #require(source["files"] as? [String]) {
                let name = "\(directory)/\(path)"
                let file = Self.corpus.appendingPathComponent(name).path
                do {
                    let document = try PropertyListDocument(contentsOf: file)
                    results[name] = ["value": Self.canonical(.dictionary(document.root))]
                    read += 1
                } catch {
                    results[name] = ["error": "\(error)"]
                }
            }
        }
        #expect(results.count >= 30)
        #expect(read >= 40, "\(results.filter { ($0.value as? [String: Any])?["error"] != nil })")
        if let output = ProcessInfo.processInfo.environment["PLIST_CORPUS_OUTPUT"] {
            let data = try JSONSerialization.data(withJSONObject: results, options: [.sortedKeys])
            try data.write(to: URL(fileURLWithPath: output))
        }
    }

    /// The canonical form `scripts/plist-corpus-compare.py` makes of plistlib's values: each value
    /// tagged with its type; integers in decimal, reals as the hexadecimal of their bits, dates as
    /// microseconds since 1970 (rounded as Python's `timedelta` rounds), data in base64.
    static func canonical(_ value: SettingValue) -> Any {
        switch value {
        case .bool(let flag): return ["bool": flag]
        case .integer(let number): return ["int": String(number)]
        case .real(let number):
            let hex = String(number.bitPattern, radix: 16)
            return ["real": String(repeating: "0", count: 16 - hex.count) + hex]
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            let whole = seconds.rounded(.down)
            let micro = Int(((seconds - whole) * 1_000_000).rounded(.toNearestOrEven))
            return ["date": (Int(whole) + 978_307_200) * 1_000_000 + micro]
        case .data(let bytes): return ["data": bytes.base64EncodedString()]
        case .string(let text): return ["string": text]
        case .array(let elements): return ["array": elements.map(canonical)]
        case .dictionary(let entries): return ["dict": entries.mapValues(canonical)]
        }
    }
}
