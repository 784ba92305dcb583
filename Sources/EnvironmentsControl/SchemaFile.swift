package import Environments

/// A settings declaration in a JSON Schema file that a command line names: `--schema FILE` of
/// `envctl check` and of `envctl publish` (envctl-fleet), or the schema a package installs
/// (`/usr/share/<app-name>/schema.json`). `envctl schema` writes one: the text of the control
/// interface's `Schema` reply (``SchemaReply``).
///
/// Both tools read it here, so that they fail with the same sentence.
package enum SchemaFile {
    /// Reads the declaration in the JSON Schema file at `path`.
    ///
    /// - Throws: ``SchemaFileError``, in the words both tools print: `cannot read the schema
    ///   file: …` when the file cannot be read (the error names it), else `PATH: …` when it is
    ///   not a declaration.
    package static func declaration(at path: String) throws(SchemaFileError)
        -> SettingsDeclaration
    {
        do {
            return try SettingsDeclaration(jsonSchemaFile: path)
        } catch let error as EnvironmentError {
            throw SchemaFileError(description: "cannot read the schema file: \(error)")
        } catch {
            throw SchemaFileError(description: "\(path): \(error)")
        }
    }
}

/// Why ``SchemaFile/declaration(at:)`` read no declaration: one sentence that names the file.
package struct SchemaFileError: Error, CustomStringConvertible, Sendable {
    /// The sentence.
    package var description: String
}
