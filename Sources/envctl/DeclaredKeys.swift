import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--allow-undeclared`, and the check it lifts: a key that the application's declaration
/// does not cover is a key nothing reads (a typo, most often), so `set` refuses it where a
/// declaration is known, as it refuses a shadowed one; `edit` refuses such a result as an invalid one.
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
        -> KnownDeclaration?
    {
        if let (declaration, file) = try schema.declaration(applicationName: location.applicationName) {
            return KnownDeclaration(declaration, source: file)
        }
        // A daemon that predates `Schema` declares nothing envctl can see: nothing to refuse.
        guard let daemon, let schema = try daemon.schema(ifServed: true), schema.declared else { return nil }
        do {
            return KnownDeclaration(
                try SettingsDeclaration(jsonSchema: Data(schema.schema.utf8)), source: "the running daemon")
        } catch {
            throw Failure("the daemon's schema cannot be read: \(error)")
        }
    }

    /// What `--allow-undeclared` lifts, in a refusal.
    static let override = "pass --allow-undeclared"

    /// Refuses `key` (its `components`) when `known` covers it not, unless
    /// `--allow-undeclared`: what is wrong, the declared key spelled nearly the same, and what
    /// to do (printed escaped, as every message is). Nothing has been written when it throws.
    func check(_ key: String, components: [String], against known: KnownDeclaration?) throws {
        guard !allowUndeclared, let known,
            let refusal = known.refusal(key, components: components, verb: "set", override: Self.override)
        else { return }
        throw refusal
    }

    /// The declaration `edit` checks the keys it writes against: `known`, or `nil` with
    /// `--allow-undeclared`.
    func enforced(_ known: KnownDeclaration?) -> KnownDeclaration? {
        allowUndeclared ? nil : known
    }
}
