import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import TextEscaping
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the effective value of one key (a dotted path reaches nested dictionaries).",
        discussion: """
            Control characters in the value (a line feed, ESC, NUL) are escaped as Swift string literals \
            write them, as in every text output of envctl; `envctl show --json` has the exact value. A \
            secret prints only with --show-secrets; without it, envctl prints nothing on standard output, \
            says why on standard error and exits 1.
            """)

    @OptionGroup var location: LocationOptions

    @Argument(help: "The key, for example APIBaseUrl or Database.Host.")
    var key: String

    @Flag(help: "Print a secret value (from a daemon: root and its user only); without it, a secret prints nothing.")
    var showSecrets = false

    /// A secret asked for without --show-secrets: nothing on standard output (a script must not
    /// take a placeholder for the value), a sentence on standard error, exit status 1.
    private static func redacted(_ key: String) -> Failure {
        Failure("'\(key)' is secret: its value is redacted and not printed; pass --show-secrets to print it")
    }

    func run() throws {
        switch try location.target() {
        case .daemon(let client):
            var parameters: [String: JSONValue] = ["key": .string(key)]
            if showSecrets { parameters["showSecrets"] = .bool(true) }
            let reply = try client.ask(.get, parameters)
            guard let setting = try? JSONValue.record(SettingRecord.self, from: reply["setting"]?.objectValue)
            else { throw Failure("the daemon's answer cannot be read") }
            guard let value = setting.value else { throw Self.redacted(key) }
            printLine(value)
        case .files:
            try printFromFiles()
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
        // A credential this shell cannot read was never read: there is no value to print, and
        // its placeholder must not pass for one.
        let canonical = (try? SettingPath(parsing: key).description) ?? key
        let unreadable = snapshot.unreadableCredentials.filter {
            $0.key == canonical || $0.key.hasPrefix(canonical + ".")
        }
        if !unreadable.isEmpty {
            let names = Set(unreadable.values.joined()).sorted().joined(separator: ", ")
            throw Failure(
                "'\(key)' is built from credential \(names), which cannot be read here (\(Listing.unreadableReason())): "
                    + "envctl has no value to print; ask the running daemon, as root or its user: "
                    + "envctl get \(key) --show-secrets --app-name NAME")
        }
        if entry.isSecret && !showSecrets { throw Self.redacted(key) }
        switch entry.value {
        case .array, .dictionary:
            print(ControlCharacters.escapedJSON(try Listing.jsonText(Listing.jsonValue(entry.value))))
        default:
            printLine(entry.value.description)
        }
    }
}
