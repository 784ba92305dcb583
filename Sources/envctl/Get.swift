import ArgumentParser
import Environments
import Foundation

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the effective value of one key (a dotted path reaches nested dictionaries).")

    @OptionGroup var location: LocationOptions

    @Argument(help: "The key, for example APIBaseUrl or Database.Host.")
    var key: String

    @Flag(help: "Print a secret value instead of <redacted>.")
    var showSecrets = false

    func run() throws {
        try reportingFailures {
            let snapshot = try location.load(state: location.daemonState())
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
                let data = try! JSONSerialization.data(
                    withJSONObject: SettingsListing.jsonValue(entry.value),
                    options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            default:
                print(entry.value.description)
            }
        }
    }
}
