extension Environment {
    /// The environments the configuration that `options` describe defines: every top-level
    /// dictionary other than the reserved keys, in the sources' documents, the main file
    /// (or the built-in configuration) and the drop-ins, sorted.
    ///
    /// What `envctl check` checks when no environment is named.
    ///
    /// - Throws: ``EnvironmentError`` when the files cannot be found, read or parsed, as
    ///   loading would.
    package static func definedEnvironments(_ options: EnvironmentOptions) throws(EnvironmentError) -> [String] {
        let builder = SnapshotBuilder(options: options, overrides: [], readsFiles: true)
        var warnings: [ConfigurationWarning] = []
        let files = try builder.readDocuments(
            ConfigurationLocation.resolved(options), previous: nil, warnings: &warnings)
        return Set(files.flatMap(\.environments.keys)).sorted()
    }
}
