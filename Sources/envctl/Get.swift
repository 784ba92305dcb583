import ArgumentParser
import Environments
import EnvironmentsControl
import Foundation
import TextEscaping

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the effective value of one key (a dotted path reaches nested dictionaries).",
        discussion: """
            Control characters in the value (a line feed, ESC, NUL) are escaped as Swift string literals \
            write them, as in every text output of envctl; `envctl show --json` has the exact value.
            """)

    @OptionGroup var location: LocationOptions

    @Argument(help: "The key, for example APIBaseUrl or Database.Host.")
    var key: String

    @Flag(help: "Print a secret value instead of <redacted> (from a daemon: root and its user only).")
    var showSecrets = false

    func run() throws {
        try reportingFailures {
            switch try location.target() {
            case .daemon(let client):
                var parameters: [String: JSONValue] = ["key": .string(key)]
                if showSecrets { parameters["showSecrets"] = .bool(true) }
                let reply = try client.ask(ControlInterface.Method.get, parameters)
                guard let setting = try? JSONValue.record(SettingRecord.self, from: reply["setting"]?.objectValue)
                else { throw Failure("the daemon's answer cannot be read") }
                guard let value = setting.value else {
                    printError("'\(key)' is secret; pass --show-secrets to print it")
                    print(ConfiguredValue.redacted)
                    return
                }
                printLine(value)
            case .files:
                try printFromFiles()
            }
        }
    }

    private func printFromFiles() throws {
        let snapshot = try location.load()
        guard let entry = snapshot.configuredValue(forKey: key) else {
            do {
                _ = try snapshot.require(key, as: SettingValue.self)
            } catch {
                throw Failure("\(error)")
            }
            return
        }
        if entry.isSecret && !showSecrets {
            printError("'\(key)' is secret; pass --show-secrets to print it")
            print(ConfiguredValue.redacted)
            return
        }
        switch entry.value {
        case .array, .dictionary:
            print(ControlCharacters.escapedJSON(try Listing.jsonText(Listing.jsonValue(entry.value))))
        default:
            printLine(entry.value.description)
        }
    }
}
