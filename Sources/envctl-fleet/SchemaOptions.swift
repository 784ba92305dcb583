#if Fleet
    import ArgumentParser
    import Environments
    import EnvironmentsControl

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// `--schema FILE` of `envctl publish`: the application's settings declaration as `envctl
    /// schema` prints it, to check the fleet's documents against.
    struct SchemaOptions: ParsableArguments {
        @Option(
            name: .customLong("schema"),
            help: ArgumentHelp(
                "Check against the settings declaration in this JSON Schema file (envctl schema prints one).",
                valueName: "file"))
        var file: String?

        /// Reads a declaration from a JSON Schema file (``SchemaFile``), failing with its sentence.
        static func read(_ path: String) throws(Failure) -> SettingsDeclaration {
            do { return try SchemaFile.declaration(at: path) } catch { throw Failure("\(error)") }
        }
    }
#endif
