import ArgumentParser
@_spi(Integrations) import Environments
import Foundation

/// `--schema FILE` of `envctl publish`: the application's settings declaration as `envctl
/// schema` prints it, to check the fleet's documents against.
struct SchemaOptions: ParsableArguments {
    @Option(
        name: .customLong("schema"),
        help: ArgumentHelp(
            "Check against the settings declaration in this JSON Schema file (envctl schema prints one).",
            valueName: "file"))
    var file: String?

    /// Reads a declaration from a JSON Schema file.
    static func read(_ path: String) throws -> SettingsDeclaration {
        do {
            return try SettingsDeclaration(jsonSchemaFile: path)
        } catch let error as EnvironmentError {
            throw Failure("cannot read the schema file: \(error)")
        } catch {
            throw Failure("\(path): \(error)")
        }
    }
}
