import ArgumentParser
import Environments
import EnvironmentsEditing
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

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

    /// The path of `envctl-fleet`: beside this executable, else the first on `PATH` that is a
    /// regular executable file (a directory of that name is passed over, as `execvp(3)`, git
    /// and kubectl do).
    ///
    /// As root, the program envctl runs must be one only root can change (the rule for
    /// sockets, in the article Trust and identity): one in a directory that others can write,
    /// or that belongs to another user (or any directory above it, but for sticky ones such as
    /// `/tmp`), one that another user owns or others can write, and one found through `.`, an
    /// empty `PATH` entry or another relative one, is refused, naming its path; the search
    /// does not go on past it.
    ///
    /// - Throws: A ``Failure`` that names the program refused and why.
    static func locate(_ processEnvironment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        var directories: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directories.append(PathNames.directory(of: executable))
        }
        let asRoot = geteuid() == 0
        // An empty entry is the working directory (POSIX): envctl as root never runs from there.
        directories += (processEnvironment["PATH"] ?? "").split(separator: ":", omittingEmptySubsequences: false)
            .map(String.init)
        for directory in directories {
            let relative = !directory.hasPrefix("/")
            if relative && !asRoot && directory.isEmpty { continue }
            let path = directory.isEmpty ? programName : PathNames.join(directory, programName)
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(path, X_OK) == 0 else {
                continue
            }
            if asRoot { try ProgramSafety.refuseUnsafe(path, status, relative: relative, entry: directory) }
            return path
        }
        return nil
    }

    /// The program, or a failure that says which package provides it and why it was needed.
    static func require(for purpose: String) throws -> String {
        guard let path = try locate() else {
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
        let (status, data) = try spawnReading(path, ["documents"] + commandLine.etcd)
        guard status == 0 else {
            throw Failure(
                "the fleet's documents could not be read (\(programName) documents exited with status \(status))")
        }
        guard
            let list = (try? PropertyListReading.value(data, file: "\(programName) documents"))?.anyValue
                as? [[String: Any]]
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

extension FleetTool {
    /// Runs `path` with `arguments` and reads its standard output (at most
    /// ``maximumDocumentBytes``); its standard input and error are envctl's. Returns its exit
    /// status (a signal's number plus 128 when one ended it) and output.
    ///
    /// Spawned directly (`posix_spawn(3)`), not through Foundation's `Process`, which leaves a
    /// socket of its own open in the child: the child inherits standard input, output and error,
    /// and nothing else (every descriptor envctl opens is close-on-exec).
    static func spawnReading(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: Data) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw Failure("cannot run \(path): \(String(cString: strerror(errno)))") }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let (reading, writing) = (descriptors[0], descriptors[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, writing, STDOUT_FILENO)
        var argv: [UnsafeMutablePointer<CChar>?] = ([programName] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, &argv, environ)
        close(writing)
        guard spawned == 0 else {
            close(reading)
            throw Failure("cannot run \(path): \(String(cString: strerror(spawned)))")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var tooLong = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(reading, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data.append(contentsOf: buffer[..<count])
            if data.count > maximumDocumentBytes {
                tooLong = true
                kill(pid, SIGTERM)
                break
            }
        }
        close(reading)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if tooLong { throw Failure("\(path) documents wrote more than \(maximumDocumentBytes >> 20) MiB: not read") }
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        return (status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f), data)
    }
}

/// Which programs envctl runs as root: only one that only root can change (the rule for
/// sockets, in the article Trust and identity).
enum ProgramSafety {
    /// Fails when root would run `path` (a regular executable file, `status` its `stat`) though
    /// someone else could have put it there or changed it.
    static func refuseUnsafe(_ path: String, _ status: stat, relative: Bool, entry: String) throws {
        let why: String?
        if relative {
            why = "it was found through the PATH entry '\(entry)', which is the working directory, not a fixed one"
        } else if status.st_uid != 0 && status.st_uid != geteuid() {
            why = "it belongs to uid \(status.st_uid), not to root"
        } else if status.st_mode & S_IWOTH != 0 || (status.st_mode & S_IWGRP != 0 && status.st_gid != 0) {
            why = "others can write it (mode \(String(status.st_mode & 0o7777, radix: 8)))"
        } else {
            let trusted: Set<UInt32> = [0, geteuid()]
            let safety = DirectorySafety(owners: trusted, ancestorOwners: trusted, allowsStickyAncestors: true)
            why = safety.problem(with: PathNames.directory(of: path))
        }
        guard let why else { return }
        throw Failure(
            "refusing to run \(path) as root: \(why); envctl runs as root only a program that only root can change. Install it in a directory only root can write (/usr/bin), or remove that directory from PATH"
        )
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
