import Environments
import Foundation
import Testing

/// One version everywhere (issue 34.3): `LibraryVersion.current` (what `envctl --version` and
/// the example daemons print), the newest release in CHANGELOG.md (the git tag of the same
/// name), and every dependency line and package file name in the README, the articles and the
/// examples. A release bumps all of them at once, or this fails.
@Suite struct ReleaseVersionTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// The README, the DocC articles, the examples' manifests and READMEs, the end-to-end README.
    static func documents() throws -> [String] {
        let manager = FileManager.default
        var paths = ["README.md", "Tests/EndToEnd/README.md"]
        for module in try manager.contentsOfDirectory(atPath: repository.appendingPathComponent("Sources").path) {
            let sources = "Sources/\(module)"
            for catalog in (try? manager.contentsOfDirectory(atPath: repository.appendingPathComponent(sources).path))
                ?? [] where catalog.hasSuffix(".docc")
            {
                let articles = try manager.contentsOfDirectory(
                    atPath: repository.appendingPathComponent("\(sources)/\(catalog)").path)
                paths += articles.filter { $0.hasSuffix(".md") }.map { "\(sources)/\(catalog)/\($0)" }
            }
        }
        for example in try manager.contentsOfDirectory(atPath: repository.appendingPathComponent("Examples").path) {
            paths += ["Examples/\(example)/Package.swift", "Examples/\(example)/README.md"]
        }
        return paths.filter { manager.fileExists(atPath: repository.appendingPathComponent($0).path) }.sorted()
    }

    @Test("CHANGELOG.md's newest release is LibraryVersion.current, below an Unreleased section")
    func changelog() throws {
        let headings = try Self.read("CHANGELOG.md").split(separator: "\n").filter { $0.hasPrefix("## ") }
        #expect(headings.first == "## [Unreleased]")
        let released = headings.dropFirst().first.map(String.init) ?? "(none)"
        #expect(
            released.hasPrefix("## [\(LibraryVersion.current)] - "),
            "CHANGELOG.md's newest release is '\(released)'; the code's version is \(LibraryVersion.current)")
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
}
