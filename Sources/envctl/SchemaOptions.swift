import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `--schema FILE`: the application's settings declaration, as `envctl schema` prints it and
/// its package installs it (`/usr/share/<app-name>/schema.json`), for checking files without
/// the application's code.
struct SchemaOptions: ParsableArguments {
    @Option(
        name: .customLong("schema"),
        help: ArgumentHelp(
            "Check against the settings declaration in this JSON Schema file (envctl schema prints one; reading files with --app-name, /usr/share/<app-name>/schema.json is the default when it is there).",
            valueName: "file"))
    var file: String?

    /// Where a package installs its application's schema.
    static func installedPath(_ applicationName: String) -> String {
        "/usr/share/\(applicationName)/schema.json"
    }

    /// The declaration in `--schema`, else in the installed schema of `--app-name` when there
    /// is one, with the file it came from; `nil` when neither.
    func declaration(applicationName: String?) throws -> (declaration: SettingsDeclaration, file: String)? {
        let path: String
        if let file {
            path = file
        } else if let applicationName, FileManager.default.fileExists(atPath: Self.installedPath(applicationName)) {
            path = Self.installedPath(applicationName)
        } else {
            return nil
        }
        return (try Self.read(path), path)
    }

    /// Reads a declaration from a JSON Schema file (``SchemaFile``), failing with its sentence.
    static func read(_ path: String) throws(Failure) -> SettingsDeclaration {
        do { return try SchemaFile.declaration(at: path) } catch { throw Failure("\(error)") }
    }
}

extension LocationOptions {
    /// Fails when `--schema` is given with `--pid` or `--socket`: a schema file is for checking
    /// files, and a daemon checks against its own declaration.
    func refuseDaemon(with schema: SchemaOptions) throws {
        if schema.file != nil, pid != nil || socket != nil {
            throw Failure(
                "--schema reads files; a running daemon checks against its own declaration: drop --pid or --socket, or --schema"
            )
        }
    }
}
