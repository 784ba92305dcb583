import ArgumentParser
@_spi(Integrations) import Environments
@_spi(Integrations) import EnvironmentsControl
import Foundation
import Varlink

/// `--allow-undeclared`, and the check it lifts: a key that the application's declaration
/// does not cover is a key nothing reads (a typo, most often), so `set` refuses it where a
/// declaration is known, as it refuses a shadowed one.
struct DeclaredKeyOptions: ParsableArguments {
    @Flag(
        name: .customLong("allow-undeclared"),
        help:
            "Write a key the application does not declare (nothing reads it) all the same, where a declaration is known: the running daemon's, --schema's or /usr/share/<app-name>/schema.json."
    )
    var allowUndeclared = false

    /// The declaration to check keys against, and where it came from: `--schema` (or the
    /// schema `--app-name`'s package installed), else the running daemon's (`Schema`); `nil`
    /// when none is known, or the daemon declares no settings.
    static func known(schema: SchemaOptions, location: LocationOptions, daemon: VarlinkClient?) throws
        -> (declaration: SettingsDeclaration, source: String)?
    {
        if let (declaration, file) = try schema.declaration(applicationName: location.applicationName) {
            return (declaration, file)
        }
        // A daemon that predates `Schema` declares nothing envctl can see: nothing to refuse.
        guard let daemon, let schema = try daemon.schema(ifServed: true), schema.declared else { return nil }
        do {
            return (try SettingsDeclaration(jsonSchema: Data(schema.schema.utf8)), "the running daemon")
        } catch {
            throw Failure("the daemon's schema cannot be read: \(error)")
        }
    }

    /// Refuses `key` (its `components`) when `declaration` covers it not, unless
    /// `--allow-undeclared`: what is wrong, the declared key spelled nearly the same, and what
    /// to do (printed escaped, as every message is). Nothing has been written when it throws.
    func check(
        _ key: String, components: [String], against known: (declaration: SettingsDeclaration, source: String)?
    ) throws {
        guard !allowUndeclared, let known, let miss = known.declaration.undeclared(components) else { return }
        var message =
            "'\(key)' is not a declared setting (declarations from \(known.source)), so nothing would read it"
        message += miss.suggestion.map { "; did you mean '\($0)'?" } ?? "."
        message +=
            " Nothing was written: "
            + (miss.suggestion.map { "set '\($0)' instead, or " } ?? "")
            + "pass --allow-undeclared to write it all the same"
        throw Failure(message)
    }
}
