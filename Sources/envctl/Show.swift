import ArgumentParser
import Environments
import EnvironmentsControl
import FileWatching
import JSONText
import TextEscaping
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        var listing: Listing
        switch try location.target() {
        case .daemon(let client):
            listing = Listing(try client.describe(showSecrets: showSecrets))
            let process = location.daemonProcess(client)
            listing.origin = "from the running daemon\(process.map { ", pid \($0)" } ?? "") (\(client.path))"
            listing.readFrom = [
                "daemon": .object(["socket": .string(client.path), "pid": process.map { .int(Int($0)) } ?? .null])
            ]
        case .files:
            let snapshot = try location.load()
            listing = Listing(snapshot, revealSecrets: showSecrets)
            let directory = snapshot.location?.directory ?? "the built-in configuration"
            listing.origin =
                "from the files in \(directory), environment \(snapshot.environmentName) "
                + "(\(location.environmentChoice())); not from a running daemon"
            listing.readFrom = [
                "files": .object([
                    "directory": .string(directory), "environmentChosenBy": .string(location.environmentChoice()),
                ])
            ]
        }
        listing.noteExtensions(ConfigurationExtensions.current())
        if json {
            print(ControlCharacters.escapedJSON(try listing.json()))
        } else {
            print(listing.table, terminator: "")
        }
    }
}
