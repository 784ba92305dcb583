#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The checks of a build: each throws the error that rejects the configuration, or returns.
extension SnapshotBuilder {
    /// An instance the options require to be known must have a section in some file.
    func checkInstanceIsKnown(_ instance: String?, in files: [EnvironmentsFile], environment name: String)
        throws(EnvironmentError)
    {
        guard let instance, options.requiresKnownInstance, !files.contains(where: { $0.instances[instance] != nil })
        else { return }
        let known = Set(files.flatMap(\.instances.keys)).sorted()
        throw EnvironmentError(
            .unknownInstance,
            "unknown instance '\(instance)'; known instances: \(known.isEmpty ? "none defined" : known.joined(separator: ", "))",
            environment: name, searchedFiles: files.map(\.file).filter { $0 != builtInLabel },
            hint:
                "Select a known instance, or add an '\(instance)' dictionary to Instances in \(options.fileName) or a drop-in"
        )
    }

    /// The declaration's verdict: every problem of the configuration as written (restart-only
    /// keys' new values included: a value the program could not start with is refused now, not
    /// held until the restart it would fail at) in one error, else its warnings.
    ///
    /// - Parameters:
    ///   - written: The interpolated tree with every new value.
    ///   - running: The tree to run with (restart-only keys held at their running values).
    static func checkDeclaration(
        _ check: DeclarationCheck, written: [String: SettingNode], running: [String: SettingNode],
        files: [EnvironmentsFile], appliedVariables: [(variable: String, path: [String])], prefix: String,
        environment name: String
    ) throws(EnvironmentError) -> [ConfigurationWarning] {
        let problems = check.problems(in: written)
        if !problems.isEmpty { throw Self.failure(problems, environment: name) }
        return DeclarationCheck.misspeltSections(in: files) + check.unknownKeys(in: running)
            + check.unmatchedVariables(appliedVariables, prefix: prefix)
    }

    /// One error for every problem a declaration found: the first names its key, file and
    /// line; the message lists each (the first ``DeclarationCheck/errorLimit``, then a count).
    static func failure(_ problems: [EnvironmentError], environment: String) -> EnvironmentError {
        let first = problems[0]
        if problems.count == 1 {
            var error = first
            error.environment = environment
            return error
        }
        var lines = problems.prefix(DeclarationCheck.errorLimit).enumerated().map { index, problem in
            "(\(index + 1)) " + (problem.location.isEmpty ? "" : problem.location + ": ") + problem.message
        }
        if problems.count > DeclarationCheck.errorLimit {
            lines.append("and \(problems.count - DeclarationCheck.errorLimit) more")
        }
        return EnvironmentError(
            .validationFailed,
            "\(problems.count) settings do not match their declaration: " + lines.joined(separator: "; "),
            key: first.key, environment: environment, file: first.file, line: first.line,
            hint: "Fix each of them; the running configuration stays until then")
    }

    /// With `EnvironmentOptions.warningsAreErrors`, the first warning (other than a change
    /// under way) rejects the configuration.
    func refuseWarningsIfStrict(_ warnings: [ConfigurationWarning], environment name: String)
        throws(EnvironmentError)
    {
        guard options.warningsAreErrors, let first = warnings.first(where: { $0.code != .changeUnderWay })
        else { return }
        let more = warnings.count > 1 ? " (and \(warnings.count - 1) more warnings)" : ""
        throw EnvironmentError(
            .strictWarning, first.message + more, key: first.key, environment: name, file: first.file,
            line: first.line,
            hint: (first.hint.map { $0 + "; " } ?? "")
                + "warnings are errors here (EnvironmentOptions.warningsAreErrors or envctl check --strict)")
    }

    /// The value of the options' log level key, when there is one, must name a level.
    func checkLogLevel(in snapshot: EnvironmentSnapshot) throws(EnvironmentError) {
        guard let key = options.logLevelKey, let entry = snapshot.configuredValue(forKey: key) else { return }
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        guard case .string(let level) = entry.value, levels.contains(level.lowercased()) else {
            // The value as listings show it: a LogLevel interpolated from a secret is not printed.
            let shown = entry.isSecret ? entry.displayValue() : "'\(entry.value)'"
            throw EnvironmentError(
                .validationFailed, "'\(key)' is \(shown), expected one of \(levels.joined(separator: ", "))",
                key: key, environment: snapshot.environmentName, file: entry.source.file)
        }
    }

    /// The application's own `validate`, when the options have one. Its messages may quote a
    /// value; a secret one is taken out.
    func validate(_ snapshot: EnvironmentSnapshot) throws(EnvironmentError) {
        guard let validate = options.validate else { return }
        do {
            try validate(snapshot)
        } catch let error as EnvironmentError {
            throw snapshot.redactingSecrets(in: error)
        } catch {
            throw EnvironmentError(
                .validationFailed, "the configuration was rejected: \(snapshot.redactingSecrets(in: "\(error)"))",
                environment: snapshot.environmentName, searchedFiles: snapshot.files)
        }
    }
}
