import ArgumentParser
import Environments
import Foundation

/// `envctl-fleet`, the program (built with the package trait Fleet) that holds envctl's fleet
/// commands, so that envctl itself links no etcd client (swift-nio, BoringSSL,
/// AsyncHTTPClient).
///
/// - `envctl publish …` runs `envctl-fleet publish …`, and `envctl fleet ARGS…` runs
///   `envctl-fleet ARGS…`, in envctl's place (`execv(3)`: its output and exit status are the
///   command's).
/// - Any other command given etcd options (`--etcd-endpoints`, `--etcd-prefix`, …), or run
///   with `$ENVIRONMENTS_ETCD_ENDPOINTS` set, while it reads files, runs `envctl-fleet documents`
///   with those options and applies the fleet's documents below the files.
///
/// envctl looks for it beside its own executable, then on `PATH` (the convention of git's and
/// kubectl's plugins), and says which package provides it when neither has it.
enum FleetTool {
    /// The program's file name.
    static let programName = "envctl-fleet"

    /// What to install when it is not found.
    static let provider =
        "it is in the Debian package environments-fleet, or build it with swift-environments' trait Fleet "
        + "(swift build -c release --traits Fleet --product envctl-fleet) and put it beside envctl or on PATH"

    /// The subcommands that are envctl-fleet's.
    static let subcommands: Set<String> = ["publish", "fleet"]

    /// The variable that names etcd endpoints for every fleet command.
    static let endpointsVariable = "ENVIRONMENTS_ETCD_ENDPOINTS"

    /// The most bytes read from `envctl-fleet documents`: the fleet's own limit on all documents
    /// together is 64 MiB by default (`ENVIRONMENTS_ETCD_MAX_TOTAL_BYTES`); this only keeps a
    /// broken program from filling envctl's memory.
    static let maximumDocumentBytes = 1 << 30

    /// envctl's command line, split into the etcd options (`--etcd-NAME VALUE` and
    /// `--etcd-NAME=VALUE`, each taking a value; none after `--`) and the rest, which
    /// ArgumentParser parses.
    static let commandLine: (etcd: [String], rest: [String]) = split(Array(CommandLine.arguments.dropFirst()))

    /// Splits `arguments` into etcd options and the rest.
    static func split(_ arguments: [String]) -> (etcd: [String], rest: [String]) {
        var etcd: [String] = []
        var rest: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" {
                rest += arguments[index...]
                break
            }
            if argument.hasPrefix("--etcd-") {
                etcd.append(argument)
                if !argument.contains("="), index + 1 < arguments.endIndex {
                    etcd.append(arguments[index + 1])
                    index += 1
                }
            } else {
                rest.append(argument)
            }
            index += 1
        }
        return (etcd, rest)
    }

    /// Whether the fleet's documents go below the files: etcd options were given, or
    /// `$ENVIRONMENTS_ETCD_ENDPOINTS` is set.
    static func isRequested(_ processEnvironment: [String: String]) -> Bool {
        !commandLine.etcd.isEmpty || !(processEnvironment[endpointsVariable] ?? "").isEmpty
    }

    /// The path of `envctl-fleet`: beside this executable, else the first on `PATH`.
    static func locate(_ processEnvironment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var directories: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append((executable as NSString).deletingLastPathComponent)
        }
        directories += (processEnvironment["PATH"] ?? "").split(separator: ":").map(String.init)
        for directory in directories where !directory.isEmpty {
            let path = (directory as NSString).appendingPathComponent(programName)
            if access(path, X_OK) == 0 { return path }
        }
        return nil
    }

    /// The program, or a failure that says which package provides it and why it was needed.
    static func require(for purpose: String) throws -> String {
        guard let path = locate() else {
            throw Failure("\(purpose) needs \(programName), which is not installed: \(provider)")
        }
        return path
    }

    /// Runs `envctl-fleet` in envctl's place with `arguments` (after its name); returns only
    /// when it cannot be run.
    static func exec(_ arguments: [String], for purpose: String) throws -> Never {
        let path = try require(for: purpose)
        let argv = ([programName] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        throw Failure("cannot run \(path): \(String(cString: strerror(errno)))")
    }

    /// The fleet's documents, lowest first, read by `envctl-fleet documents` with the etcd
    /// options of envctl's command line (and the `$ENVIRONMENTS_ETCD_*` variables it inherits).
    static func documents() throws -> [ConfigurationDocument] {
        let path = try require(for: "reading the fleet's documents from etcd (etcd options, or $\(endpointsVariable))")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["documents"] + commandLine.etcd
        let output = Pipe()
        process.standardOutput = output
        // Its errors (etcd unreachable, a limit, a bad option) reach the operator as they are.
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            throw Failure("cannot run \(path): \(error.localizedDescription)")
        }
        var data = Data()
        let reader = output.fileHandleForReading
        while let chunk = try? reader.read(upToCount: 1 << 20), !chunk.isEmpty {
            data.append(chunk)
            if data.count > maximumDocumentBytes {
                process.terminate()
                process.waitUntilExit()
                throw Failure("\(path) documents wrote more than \(maximumDocumentBytes >> 20) MiB: not read")
            }
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                "the fleet's documents could not be read (\(programName) documents exited with status \(process.terminationStatus))"
            )
        }
        guard let list = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [[String: Any]]
        else {
            throw Failure(
                "\(path) documents wrote no property list: is it the version of this envctl (\(LibraryVersion.current))?"
            )
        }
        return try list.map { entry in
            guard let origin = entry["origin"] as? String, let bytes = entry["data"] as? Data else {
                throw Failure("\(path) documents wrote an entry without origin and data")
            }
            return ConfigurationDocument(origin: origin, data: bytes)
        }
    }
}

/// Documents held in memory, as the fleet layer of a configuration envctl builds.
struct FixedDocuments: ConfigurationSource {
    var name: String { "fleet" }
    var held: [ConfigurationDocument]
    func documents() throws(EnvironmentError) -> [ConfigurationDocument] { held }
}

/// `envctl publish`: runs `envctl-fleet publish` (``FleetTool``); listed here for `--help` and
/// completions.
struct Publish: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Validate property-list files as the fleet's configuration and write them to etcd (envctl-fleet).",
        discussion:
            "Runs envctl-fleet publish, built with the package trait Fleet: envctl publish --help shows its options."
    )

    @Argument(parsing: .allUnrecognized) var arguments: [String] = []

    func run() throws {
        try FleetTool.exec(["publish"] + arguments, for: "envctl publish")
    }
}

/// `envctl fleet`: runs `envctl-fleet` (``FleetTool``); listed here for `--help` and completions.
struct Fleet: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask a fleet in etcd what its hosts run: envctl fleet status (envctl-fleet).",
        discussion:
            "Runs envctl-fleet, built with the package trait Fleet: envctl fleet status --help shows its options."
    )

    @Argument(parsing: .allUnrecognized) var arguments: [String] = []

    func run() throws {
        try FleetTool.exec(arguments, for: "envctl fleet")
    }
}
