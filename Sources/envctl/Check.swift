import ArgumentParser
import Environments
import Foundation

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Load and validate the configuration exactly as a load does; exit non-zero with the reason if it is bad.")

    @OptionGroup var location: LocationOptions

    func run() throws {
        try reportingFailures {
            let snapshot = try location.load(state: location.daemonState())
            var summary = "OK: environment \(snapshot.environmentName), \(snapshot.leafKeys.count) settings from "
            summary += snapshot.files.isEmpty ? "the built-in configuration" : snapshot.files.joined(separator: ", ")
            print(summary)
        }
    }
}
