import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the effective differences between two environments, or between a running daemon and its files.",
        discussion: """
            `envctl diff Staging Production` reads the files (--config-dir, --app-name, --instance and the \
            etcd options choose which) once for each environment and prints every key whose effective \
            value differs, with the source of each side. `envctl diff --running --app-name NAME` compares \
            what the running daemon uses with what its files give now for its environment and instance: \
            an edit not yet reloaded, or a restart-only key waiting for a restart. \
            `envctl diff --generation N --app-name NAME` compares the running daemon's generation N (from \
            the journal's entry for it, else from the daemon's history of its last reloads) with the one \
            it runs now. Secret values are compared but printed as <redacted> unless --show-secrets (from \
            a daemon: root and its user only; the history keeps no secret value, so not with \
            --generation). Exit status, as diff(1) and git diff --exit-code: 0 without differences, 1 with \
            differences, 2 on an error.
            """)

    @OptionGroup var location: LocationOptions

    @Flag(help: "Compare the running daemon with the files on disk.")
    var running = false

    @Option(help: "Compare the running daemon's generation N (from its history) with the one it runs now.")
    var generation: Int?

    @Flag(help: "Print secret values instead of <redacted>.")
    var showSecrets = false

    @Argument(help: "Two environments to compare (not with --running).")
    var environments: [String] = []

    func validate() throws {
        if let generation {
            guard !running, environments.isEmpty else {
                throw ValidationError(
                    "--generation compares the running daemon with its own past: give no environments, nor --running")
            }
            guard generation > 0 else { throw ValidationError("generations count from 1") }
            guard !showSecrets else {
                throw ValidationError(
                    "--generation compares what the history keeps, and it keeps no secret value: drop --show-secrets")
            }
        } else if running {
            guard environments.isEmpty else {
                throw ValidationError("--running compares one daemon with its files: give no environments")
            }
        } else if environments.count != 2 {
            throw ValidationError("give two environments (envctl diff Staging Production), or --running")
        }
    }

    /// One side's effective value of a key.
    struct Side: Equatable {
        var display: String
        /// What is compared: the value's text, or nil for a secret the daemon did not reveal,
        /// or a credential that cannot be read here.
        var comparable: String?
        var source: String
        /// Why it is not compared, when ``comparable`` is nil.
        var notCompared = "secret, not compared (--show-secrets)"
    }

    func run() throws {
        let differences: Int
        do {
            differences = try compare()
        } catch let failure as Failure {
            printError(failure.description)
            throw ExitCode(2)  // trouble, as diff(1) says it; 1 means "different"
        }
        if differences > 0 { throw ExitCode(1) }
    }

    /// Prints the differences; returns how many keys differ.
    private func compare() throws -> Int {
        let (leftName, left, rightName, right) =
            if let generation {
                try pastAndRunning(generation)
            } else if running {
                try runningAndFiles()
            } else {
                try twoEnvironments()
            }
        printLine("--- \(leftName)")
        printLine("+++ \(rightName)")
        var differences = 0
        for key in Set(left.keys).union(right.keys).sorted() {
            let (old, new) = (left[key], right[key])
            if let old, let new, old.comparable == new.comparable, old.comparable != nil { continue }
            if let old, let new, old.comparable == nil || new.comparable == nil {
                let why = new.comparable == nil ? new.notCompared : old.notCompared
                printLine("? \(key) = \(old.display)    # \(why)")
                continue
            }
            differences += 1
            if let old { printLine("- \(key) = \(old.display)    # \(old.source)") }
            if let new { printLine("+ \(key) = \(new.display)    # \(new.source)") }
        }
        if differences == 0 { printLine("# no differences") }
        return differences
    }

    private func sides(_ snapshot: EnvironmentSnapshot) -> [String: Side] {
        var sides: [String: Side] = [:]
        for key in snapshot.leafKeys {
            guard let value = snapshot.configuredValue(forKey: key) else { continue }
            sides[key] = Side(
                display: Listing.display(value, key: key, in: snapshot, revealSecrets: showSecrets),
                comparable: value.value.description, source: value.source.description)
            if let names = snapshot.unreadableCredentials[key], !names.isEmpty {
                sides[key]?.notCompared =
                    "credential \(names.sorted().joined(separator: ", ")) not readable here, not compared"
            }
        }
        return sides
    }

    /// - Parameters:
    ///   - base: The options to read with (``LocationOptions/filesOptions(processEnvironment:)``).
    ///   - directory: The running daemon's directory, for `--running`.
    private func load(
        _ base: EnvironmentOptions, environment: String, instance: String?, directory: String? = nil
    ) throws -> EnvironmentSnapshot {
        var options = base
        options.environment = environment
        options.environmentOrigin =
            directory == nil ? "given as an argument to envctl diff" : "the running daemon's environment"
        if let instance { options.instance = instance }
        if let directory { options.configDirectory = directory }
        do {
            return try Environment(options: options).snapshot
        } catch {
            throw Failure("environment \(environment): \(error)")
        }
    }

    private func twoEnvironments() throws -> (String, [String: Side], String, [String: Side]) {
        let (a, b) = (environments[0], environments[1])
        let base = try location.filesOptions()
        return (
            a, sides(try load(base, environment: a, instance: nil)), b,
            sides(try load(base, environment: b, instance: nil))
        )
    }

    private func runningAndFiles() throws -> (String, [String: Side], String, [String: Side]) {
        guard case .daemon(let client) = try location.findTarget(requireDaemon: true) else {
            throw Failure("no daemon to ask: pass --pid, --app-name or --socket")
        }
        let reply = try client.describe(showSecrets: showSecrets)
        // The files the daemon reads, wherever envctl runs (and --config-dir must name them).
        let directory = try location.daemonDirectory(reply, of: client)
        var daemon: [String: Side] = [:]
        for setting in reply.settings {
            let source = Listing.source(setting.source).description
            daemon[setting.key] = Side(
                display: setting.value ?? ConfiguredValue.redacted, comparable: setting.value, source: source)
        }
        // The files as the daemon reads them: with its declaration (declared defaults, former
        // names), when it serves one (a daemon from before `Schema` does not).
        var options = try location.options(directory: directory)
        if let schema = try? client.schema(),
            let declaration = try? SettingsDeclaration(jsonSchema: Data(schema.schema.utf8)),
            !declaration.settings.isEmpty
        {
            options.declaration = declaration
        }
        var files = sides(
            try load(options, environment: reply.environment, instance: reply.instance, directory: directory))
        // A secret the daemon did not reveal cannot be compared; say so rather than guess.
        for (key, side) in daemon where side.comparable == nil { files[key]?.comparable = nil }
        // Nor can a credential envctl could not read, which the daemon did.
        for (key, side) in files where side.notCompared.hasPrefix("credential") { files[key]?.comparable = nil }
        let what = reply.instance.map { ", instance \($0)" } ?? ""
        return (
            "running daemon (\(reply.applicationName), environment \(reply.environment)\(what), generation \(reply.generation))",
            daemon, "files now", files
        )
    }
}
