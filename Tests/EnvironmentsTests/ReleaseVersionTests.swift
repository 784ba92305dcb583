import Environments
import Foundation
import Testing

/// One version everywhere (issue 34.3): `LibraryVersion.current` (what `envctl --version` and
/// the example daemons print), the newest release in CHANGELOG.md (the git tag of the same
/// name), and every dependency line and package file name in the README, the articles and the
/// examples. A release bumps all of them at once, or this fails.
///
/// The rule (issue 43.3): the version in code is the CHANGELOG's newest *release* section, never
/// a version that only [Unreleased] describes, so a `from:` line in the docs names a release
/// whose section says what it holds. Entries under [Unreleased] are the work since that release
/// (Keep a Changelog); cutting a release moves them into a new dated section and bumps the code.
/// Each document that gives the line for a tagged release also gives one that resolves from a
/// clone before any tag exists (`path:` or `branch:`); scripts/check-dependency-line.sh builds
/// the README's line against a clone with the version tagged.
@Suite struct ReleaseVersionTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    static func contents(of directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent(directory).path))
            ?? []
    }

    /// The README, the DocC articles (those of the modules behind traits too), the examples'
    /// manifests and READMEs, the end-to-end README.
    static func documents() throws -> [String] {
        var paths = ["README.md", "Tests/EndToEnd/README.md"]
        for module in contents(of: "Sources") {
            for catalog in contents(of: "Sources/\(module)") where catalog.hasSuffix(".docc") {
                let catalogPath = "Sources/\(module)/\(catalog)"
                paths += contents(of: catalogPath).filter { $0.hasSuffix(".md") }.map { "\(catalogPath)/\($0)" }
            }
        }
        for example in contents(of: "Examples") {
            paths += ["Examples/\(example)/Package.swift", "Examples/\(example)/README.md"]
        }
        return paths.filter { FileManager.default.fileExists(atPath: repository.appendingPathComponent($0).path) }
            .sorted()
    }

    /// A release section's heading, `## [MAJOR.MINOR.PATCH] - YYYY-MM-DD`: its version and date.
    static func release(_ heading: Substring) -> (version: [Int], date: String)? {
        guard let match = heading.wholeMatch(of: #/## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})/#) else {
            return nil
        }
        let (_, major, minor, patch, date) = match.output
        return ([Int(major)!, Int(minor)!, Int(patch)!], String(date))
    }

    @Test("CHANGELOG.md's newest release section is LibraryVersion.current, below an Unreleased section")
    func changelog() throws {
        let lines = try Self.read("CHANGELOG.md").split(separator: "\n", omittingEmptySubsequences: false)
        let headings = lines.indices.filter { lines[$0].hasPrefix("## ") }
        try #require(headings.count >= 2, "CHANGELOG.md has no release section")
        #expect(lines[headings[0]] == "## [Unreleased]")
        let released = String(lines[headings[1]])
        #expect(
            released.hasPrefix("## [\(LibraryVersion.current)] - "),
            """
            CHANGELOG.md's newest release is '\(released)'; the code's version is \(LibraryVersion.current): \
            a release turns [Unreleased] into its section and bumps LibraryVersion.current together
            """)
        // The newest release says what it holds.
        let newest = lines[(headings[1] + 1)..<(headings.count > 2 ? headings[2] : lines.endIndex)]
        #expect(newest.contains { $0.hasPrefix("- ") }, "CHANGELOG.md's section '\(released)' has no entries")
        // Every release section is `## [X.Y.Z] - YYYY-MM-DD`, newest first, each version once.
        var previous: (version: [Int], date: String)?
        for index in headings.dropFirst() {
            let heading = lines[index]
            guard let release = Self.release(heading) else {
                Issue.record("CHANGELOG.md: '\(heading)' is not '## [MAJOR.MINOR.PATCH] - YYYY-MM-DD'")
                continue
            }
            if let previous {
                #expect(
                    release.version.lexicographicallyPrecedes(previous.version) && release.date <= previous.date,
                    "CHANGELOG.md: '\(heading)' is not older than the section above it")
            }
            previous = release
        }
    }

    @Test("the version is semantic (a tag SwiftPM resolves: MAJOR.MINOR.PATCH, no 'v')")
    func semantic() {
        let parts = LibraryVersion.current.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) })
    }

    @Test("every dependency line and package name in the docs and examples has the version")
    func documentsAgree() throws {
        // `swift-environments.git", from: "X"` and `example-daemon_X_ARCH.deb`.
        let patterns = [
            #/swift-environments\.git",\s*(?:from|exact):\s*"([^"]+)"/#,
            #/example-daemon_([0-9][^_]*)_/#,
        ]
        var found = 0
        for path in try Self.documents() {
            let text = try Self.read(path)
            for pattern in patterns {
                for match in text.matches(of: pattern) {
                    found += 1
                    #expect(
                        String(match.output.1) == LibraryVersion.current,
                        "\(path) names version \(match.output.1); the code's version is \(LibraryVersion.current)")
                }
            }
        }
        // The README, Getting started, the swift-configuration article and the template at least.
        #expect(found >= 4)
    }

    @Test("a document that gives the line for a tagged release also gives one that resolves before any tag")
    func untaggedLine() throws {
        let tagged = #/\.package\(url:\s*"[^"]*swift-environments(?:\.git)?",\s*(?:from|exact):/#
        // `.package(path: "../swift-environments")` or `.package(url: "…swift-environments", branch: "main")`.
        let untagged =
            #/\.package\((?:name:\s*"swift-environments",\s*)?path:\s*"[^"]*swift-environments/?"\)|\.package\(url:\s*"[^"]*swift-environments(?:\.git)?",\s*(?:branch|revision):/#
        var checked = 0
        for path in try Self.documents() {
            let text = try Self.read(path)
            guard text.contains(tagged) else { continue }
            checked += 1
            #expect(
                text.contains(untagged),
                """
                \(path) gives swift-environments by URL and version only: before the tag exists that does \
                not resolve; give `.package(path: "../swift-environments")` or a `branch:` line beside it
                """)
        }
        #expect(checked >= 3)
    }
}
