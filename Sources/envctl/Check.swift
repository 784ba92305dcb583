import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Validate the configuration exactly as a reload would; exit non-zero with the reason if it is bad.",
        discussion: """
            Asking a running daemon, the daemon builds the configuration on disk with its own options and \
            its application's validation, without applying it. Reading files, envctl loads them itself, \
            for every environment they define (one line each, OK or the error; exit 1 if any fails), or \
            only --environment's. Warnings (a key written twice in one dictionary) are printed after; \
            with --strict they fail the check (exit 1), as a deploy gate in CI should.

            With --schema FILE (a JSON Schema that envctl schema prints), envctl reads the files and \
            checks them against that settings declaration exactly as the daemon would (types, bounds, \
            required keys; unknown keys and former names as warnings): on a build server, where the \
            daemon neither runs nor is installed. Reading files with --app-name NAME, the schema its \
            package installs, /usr/share/NAME/schema.json, is used when it is there.
            """)

    @OptionGroup var location: LocationOptions

    @OptionGroup var schema: SchemaOptions

    @Flag(help: "Treat warnings (a key written twice in one dictionary) as errors: exit 1 if there are any.")
    var strict = false

    func run() throws {
        try location.refuseDaemon(with: schema)
        if schema.file != nil {
            try checkFiles()
            return
        }
        switch try location.target() {
        case .daemon(let client):
            let reply = try client.ask(.check)
            guard let check = try? JSONValue.record(CheckReply.self, from: reply) else {
                throw Failure("the daemon's answer cannot be read")
            }
            var summary = "OK: environment \(check.environment); a reload would "
            summary +=
                check.changedKeys.isEmpty
                ? "change nothing" : "change \(check.changedKeys.joined(separator: ", "))"
            if !check.pendingRestart.isEmpty {
                summary += "; waiting for a restart: \(check.pendingRestart.joined(separator: ", "))"
            }
            printLine(summary)
            try report(warnings: check.warnings ?? [])
        case .files:
            try checkFiles()
        }
    }

    /// Prints each warning; with `--strict`, fails when there are any.
    private func report(warnings: [String]) throws {
        for warning in warnings { printLine("warning: \(warning)") }
        if strict, !warnings.isEmpty {
            throw Failure(
                "\(warnings.count) warning\(warnings.count == 1 ? "" : "s"), and --strict makes \(warnings.count == 1 ? "it an error" : "them errors")"
            )
        }
    }

    /// Builds the configuration from the files for `--environment`, else for every environment
    /// they define: a deploy gate must not pass a file whose Production is broken because envctl
    /// was built for Debug.
    private func checkFiles() throws {
        var base = try location.filesOptions()
        base.warningsAreErrors = strict
        if let (declaration, file) = try schema.declaration(applicationName: location.applicationName) {
            base.declaration = declaration
            printLine(
                "checking against the \(declaration.settings.count) setting\(declaration.settings.count == 1 ? "" : "s") declared in \(file)"
            )
        }
        if location.environment != nil {
            let snapshot: EnvironmentSnapshot
            do {
                snapshot = try Environment(options: base).snapshot
            } catch {
                throw Failure(Self.describe(error))
            }
            printLine(summary(snapshot))
            try report(warnings: snapshot.warnings.map(\.description))
            return
        }
        let names: [String]
        do {
            names = try Environment.definedEnvironments(base)
        } catch {
            throw Failure("\(error)")
        }
        guard !names.isEmpty else {
            throw Failure(
                "the files define no environment: add a dictionary per environment (Debug, Production, ...) next to Common"
            )
        }
        var failed: [String] = []
        var warnings: [String] = []
        for name in names {
            var options = base
            options.environment = name
            do {
                let snapshot = try Environment(options: options).snapshot
                printLine(summary(snapshot))
                // The files' warnings, the same in every environment: once each.
                for warning in snapshot.warnings.map(\.description) where !warnings.contains(warning) {
                    warnings.append(warning)
                }
            } catch {
                printLine("FAILED: environment \(name): \(Self.describe(error))")
                failed.append(name)
            }
        }
        for warning in warnings { printLine("warning: \(warning)") }
        if !failed.isEmpty {
            throw Failure(
                "\(failed.count) of \(names.count) environments failed the check: \(failed.joined(separator: ", "))")
        }
    }

    /// `error` as this command prints it: a hint that ends in "then run `envctl check`" (written
    /// for the daemon's log) keeps only what to do, since this is that check.
    static func describe(_ error: any Error) -> String {
        guard var error = error as? EnvironmentError, let hint = error.hint,
            let range = hint.firstRange(of: ", then run `envctl check`")
        else { return "\(error)" }
        error.hint = String(hint[..<range.lowerBound])
        return "\(error)"
    }

    private func summary(_ snapshot: EnvironmentSnapshot) -> String {
        var summary =
            "OK: environment \(snapshot.environmentName), \(snapshot.leafCount) setting\(snapshot.leafCount == 1 ? "" : "s") from "
        summary += snapshot.files.isEmpty ? "the built-in configuration" : snapshot.files.joined(separator: ", ")
        let unreadable = Set(snapshot.unreadableCredentials.values.joined()).sorted()
        if !unreadable.isEmpty {
            summary +=
                "; credential \(unreadable.joined(separator: ", ")) not checked: not readable here "
                + "(\(Listing.unreadableReason())); envctl check --app-name NAME has the running daemon check it"
        }
        return summary
    }
}
