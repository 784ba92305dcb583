import ArgumentParser
import Environments
import EnvironmentsControl
import Foundation
import TextEscaping

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every effective setting with its value and source (secrets redacted).",
        discussion: """
            From a running daemon: what it runs with, restart-only keys that wait for a restart (the \
            value it runs with, and the one it takes after a restart), and its last reload if that \
            was rejected.
            """)

    @OptionGroup var location: LocationOptions

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Flag(help: "Reveal secret values instead of <redacted> (from a daemon: root and its user only).")
    var showSecrets = false

    func run() throws {
        try reportingFailures {
            let listing: Listing
            switch try location.target() {
            case .daemon(let client):
                listing = Listing(try client.describe(showSecrets: showSecrets))
            case .files:
                listing = Listing(try location.load(), revealSecrets: showSecrets)
            }
            if json {
                print(ControlCharacters.escapedJSON(try listing.json()))
            } else {
                print(listing.table, terminator: "")
            }
        }
    }
}
