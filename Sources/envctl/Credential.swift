import ArgumentParser
import Environments
import EnvironmentsEditing
import FileDescriptorWriting
import TextEscaping
import ThreadBridge
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// `envctl credential`: systemd's encrypted credentials for the `${credential:NAME}`
/// references of a configuration.
struct Credential: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Give a unit encrypted credentials (systemd-creds), and list the credentials the configuration uses.",
        discussion: """
            A ${credential:NAME} in the configuration reads the file NAME in $CREDENTIALS_DIRECTORY, where \
            systemd puts the credentials it gives the unit at start (LoadCredential=, SetCredential=, \
            LoadCredentialEncrypted=, SetCredentialEncrypted=, and from systemd 254 ImportCredential=). \
            credential set encrypts a secret for the unit; credential list says which credentials the \
            configuration uses and whether the unit gives each.
            """,
        subcommands: [CredentialSet.self, CredentialList.self])
}

/// Which unit, and where its files are: options both `credential` subcommands take.
struct UnitOptions: ParsableArguments {
    @Option(
        help:
            "The unit that runs the daemon (default: <app-name>.service, or <app-name>@<instance>.service with --instance)."
    )
    var unit: String?

    @Option(
        name: .customLong("unit-dir"),
        help: "Where unit drop-ins are written: UNIT.d/ in this directory.")
    var unitDirectory = "/etc/systemd/system"

    @Option(
        name: .customLong("credstore"),
        help: "Where encrypted credentials are written (0700, root's; the files 0600).")
    var credentialStore = "/etc/credstore.encrypted"

    /// The unit's name: `--unit` (`.service` added when it has no type), else from
    /// `--app-name` and the instance.
    func unitName(_ location: LocationOptions) throws -> String {
        let environmentVariables = ProcessInfo.processInfo.environment
        try location.checkNames(environmentVariables)
        if let unit {
            let name = unit.contains(".") ? unit : unit + ".service"
            guard Self.isUnitName(name) else { throw Failure("'\(unit)' is not a unit name (--unit)") }
            return name
        }
        guard let application = location.applicationName else {
            throw Failure("which unit? pass --unit UNIT, or --app-name NAME for NAME.service")
        }
        if let (instance, _) = location.selectedInstance(environmentVariables) {
            return "\(application)@\(instance).service"
        }
        return application + ".service"
    }

    /// A unit name envctl writes paths from: letters, digits and `:-_.\@`, no leading dot, no `/`.
    static func isUnitName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255, !name.hasPrefix("."), name.contains(".") else { return false }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || ":-_.\\@".unicodeScalars.contains($0)
        }
    }
}

/// A credential's name as `credential set` accepts it: what systemd accepts as a credential
/// (a file name) that also fits unit settings (`NAME:PATH`) and shells unquoted.
enum CredentialName {
    static func check(_ name: String) throws {
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-_.".unicodeScalars.contains($0)
        }
        guard allowed, !name.isEmpty, name.utf8.count <= 128, !name.hasPrefix(".") else {
            throw Failure(
                "'\(name)' is not a credential name envctl writes: 1 to 128 letters, digits, '-', '_' and '.', not starting with '.'"
            )
        }
    }
}

struct CredentialSet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Encrypt a secret with systemd-creds for the unit, which then gives it to the daemon as NAME.",
        discussion: """
            The secret is read from standard input (to its end; at a terminal, one line, not echoed) or \
            from --from-file, never from the command line, where every local user could read it in \
            /proc. It may be at most 1 MiB, the limit of one value; one trailing line break is not part of \
            it when the daemon reads it.

            systemd-creds encrypt --name=NAME --with-key=KEY encrypts it (it gets the secret on a pipe); \
            the result goes to CREDSTORE/UNIT-PREFIX.NAME (default \
            /etc/credstore.encrypted/example-daemon.db-password for example-daemon.service: 0600, the \
            directory 0700), and the drop-in UNIT.d/90-credential-NAME.conf in --unit-dir says \
            LoadCredentialEncrypted=NAME:THAT-FILE (0644: it holds no secret). A LoadCredential= or \
            LoadCredentialEncrypted= of the same name in the unit file is replaced by it (a later \
            setting of a name replaces an earlier one). Both files are written as set writes a drop-in: \
            under a lock in their directory, to a temporary file that is synced and renamed over the old \
            one, which keeps its owner, group, mode and ACLs; and together or not at all (a journal in \
            CREDSTORE names both until both are in place; a credential set that was killed midway is \
            completed by the next one).

            --with-key: auto (systemd-creds' default: the TPM2 chip and the host key \
            /var/lib/systemd/credential.secret where there is a TPM2, else the host key alone), host, \
            tpm2 or host+tpm2. Containers and most virtual machines have no TPM2: auto then uses the host \
            key, which systemd-creds makes on first use. A credential encrypted with the host key can be \
            decrypted on this machine only (by root); copy it elsewhere and the unit fails to start.

            Then envctl runs systemctl daemon-reload (unless --no-reload, or systemd is not running), \
            so that systemd knows the drop-in. The running daemon does not get the credential: systemd \
            gives credentials at start, so restart the unit (systemctl restart UNIT). Needs root, and \
            systemd 250 or later (LoadCredentialEncrypted=); ImportCredential= (systemd 254) is not \
            used, so it works on systemd 252 too.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var unitOptions: UnitOptions

    @Option(
        name: .customLong("from-file"),
        help: "Read the secret from this file instead of standard input.")
    var fromFile: String?

    @Option(name: .customLong("with-key"), help: "The key systemd-creds encrypts with: auto, host, tpm2 or host+tpm2.")
    var withKey = "auto"

    @Flag(name: .customLong("no-reload"), help: "Do not run systemctl daemon-reload.")
    var noReload = false

    @Argument(help: "The credential's name, as in ${credential:NAME}.")
    var name: String

    func validate() throws {
        guard ["auto", "host", "tpm2", "host+tpm2"].contains(withKey) else {
            throw ValidationError("--with-key is auto, host, tpm2 or host+tpm2 (not \(withKey))")
        }
    }

    func run() throws {
        try CredentialName.check(name)
        let unit = try unitOptions.unitName(location)
        // A misspelt unit would get a drop-in that nothing reads.
        if FileManager.default.fileExists(atPath: "/run/systemd/system"),
            UnitCredentials.ask(unit: unit).loadState == "not-found"
        {
            throw Failure("systemd knows no unit \(unit); pass --unit with the daemon's unit; nothing was written")
        }
        var secret = try SecretInput.read(fromFile: fromFile, name: name)
        defer { secret.resetBytes(in: 0..<secret.count) }
        let encrypted = try SystemdCreds.encrypt(secret, name: name, key: withKey)

        let prefix = unit.hasSuffix(".service") ? String(unit.dropLast(8)) : unit
        let credentialPath = PathNames.join(unitOptions.credentialStore, "\(prefix).\(name)")
        var store = DropInFile(path: credentialPath, mainFile: credentialPath)
        store.fixedNewFilePermissions = .init(owner: geteuid(), group: getegid(), mode: 0o600, from: nil)
        store.directoryMode = 0o700
        store.note = { printError($0) }
        store.journalScope = CredentialFiles.journalScope(
            store: unitOptions.credentialStore, unitDirectory: unitOptions.unitDirectory)

        let dropInPath = PathNames.join(
            PathNames.join(unitOptions.unitDirectory, unit + ".d"), "90-credential-\(name).conf")
        var dropIn = DropInFile(path: dropInPath, mainFile: dropInPath)
        dropIn.fixedNewFilePermissions = .init(owner: geteuid(), group: getegid(), mode: 0o644, from: nil)
        dropIn.note = { printError($0) }
        try CredentialFiles.write(
            [
                (encrypted, store),
                (Data(CredentialFiles.dropIn(name: name, path: credentialPath, key: withKey).utf8), dropIn),
            ], command: "envctl credential set")

        printLine("\(credentialPath): credential \(name) encrypted (systemd-creds, key \(withKey))")
        printLine("\(dropInPath): LoadCredentialEncrypted=\(name):\(credentialPath)")
        if !noReload {
            if FileManager.default.fileExists(atPath: "/run/systemd/system") {
                let reload = try Command.run("systemctl", ["daemon-reload"])
                guard reload.status == 0 else {
                    throw Failure(
                        "systemctl daemon-reload failed (\(reload.errorText)); run it, then systemctl restart \(unit)"
                    )
                }
            } else {
                printError("note: systemd is not running here; run systemctl daemon-reload where it runs")
            }
        }
        printError(
            "note: systemd gives credentials at start: systemctl restart \(unit) for the daemon to read \(name)")
    }
}

/// The secret `credential set` encrypts: from a file or standard input, never the command line.
enum SecretInput {
    /// The largest secret: the library's limit for one value (a credential is one value).
    static let maximumSize = 1 << 20

    static func read(fromFile path: String?, name: String) throws -> Data {
        let data: Data
        if let path {
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { throw Failure("cannot read \(path): \(DropInFile.describe(errno))") }
            defer { close(descriptor) }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                throw Failure("\(path) is not a regular file (--from-file)")
            }
            data = try readAll(descriptor, what: path)
        } else if isatty(STDIN_FILENO) == 1 {
            data = try readFromTerminal(prompt: "Secret for credential \(name): ")
        } else {
            data = try readAll(STDIN_FILENO, what: "standard input")
        }
        guard !data.isEmpty, data != Data("\n".utf8), data != Data("\r\n".utf8) else {
            throw Failure("the secret is empty (give it on standard input or with --from-file); nothing was written")
        }
        return data
    }

    private static func readAll(_ descriptor: Int32, what: String) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer { for index in buffer.indices { buffer[index] = 0 } }
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&poller, 1, -1)
                    continue
                }
                throw Failure("cannot read \(what): \(DropInFile.describe(errno))")
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[..<count])
            guard data.count <= maximumSize + 2 else {
                data.resetBytes(in: 0..<data.count)
                throw Failure("the secret in \(what) is longer than 1 MiB, the limit of one value; nothing was written")
            }
        }
        return data
    }

    /// One line from the terminal, not echoed.
    private static func readFromTerminal(prompt: String) throws -> Data {
        writeToStandardError(prompt)
        var saved = termios()
        let haveTerminal = tcgetattr(STDIN_FILENO, &saved) == 0
        if haveTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if haveTerminal { tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
            writeToStandardError("\n")
        }
        var data = Data()
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            data.append(byte)
            guard data.count <= maximumSize else { throw Failure("the secret is longer than 1 MiB") }
        }
        return data
    }
}

/// `systemd-creds`, given the secret on a pipe.
enum SystemdCreds {
    static func encrypt(_ secret: Data, name: String, key: String) throws -> Data {
        let result = try Command.run(
            "systemd-creds", ["encrypt", "--name=\(name)", "--with-key=\(key)", "-", "-"], input: secret)
        guard result.status == 0 else {
            throw Failure(
                "systemd-creds encrypt failed (exit status \(result.status)): \(result.errorText); nothing was written")
        }
        guard !result.output.isEmpty else { throw Failure("systemd-creds encrypt wrote nothing; nothing was written") }
        return result.output
    }
}

/// A program envctl runs, found in `$PATH` (or the usual directories), its output collected.
enum Command {
    struct Result {
        var status: Int32
        var output: Data
        var error: Data
        /// Standard error as one line (the tools' messages name no secret).
        var errorText: String {
            let text = String(decoding: error, as: UTF8.self).trimmingWhitespaceAndNewlines()
            return text.isEmpty ? "no message" : text.split(separator: "\n").joined(separator: "; ")
        }
    }

    /// The first regular executable file named `program` on `PATH`, then in the system's
    /// directories (a directory of that name is passed over).
    static func path(of program: String) -> String? {
        let directories =
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
            + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        return directories.lazy.map { PathNames.join($0, program) }
            .first { path in
                var status = stat()
                return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
            }
    }

    static func run(_ program: String, _ arguments: [String], input: Data? = nil) throws -> Result {
        guard let executable = path(of: program) else {
            throw Failure("\(program) is not installed (it comes with systemd; Debian: apt-get install systemd)")
        }
        // As root, only a program only root can change (it is given the secret).
        var status = stat()
        if geteuid() == 0, stat(executable, &status) == 0 {
            try ProgramSafety.refuseUnsafe(
                executable, status, relative: !executable.hasPrefix("/"),
                entry: PathNames.directory(of: executable))
        }
        // A child that ends before it read its input must not end envctl with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        return try Spawned.run(executable, [program] + arguments, input: input)
    }
}

/// A program run directly (`posix_spawn(3)`), not through Foundation's `Process`, which leaves a
/// socket of its own open in the child: the child gets its standard input, output and error
/// from envctl's pipes, and no other descriptor (every one envctl opens is close-on-exec).
enum Spawned {
    /// A pipe whose two ends are close-on-exec (the child gets its end through `dup2`).
    private static func pipeEnds() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw Failure("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return (descriptors[0], descriptors[1])
    }

    /// Reads `descriptor` to its end, then closes it.
    private static func readToEnd(_ descriptor: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data.append(contentsOf: buffer[..<count])
        }
        close(descriptor)
        return data
    }

    /// Runs `executable` with `argv` (its name first), `input` on its standard input (else
    /// `/dev/null`), and returns its exit status (128 plus a signal's number when one ended it),
    /// standard output and standard error.
    static func run(_ executable: String, _ argv: [String], input: Data?) throws -> Command.Result {
        let output = try pipeEnds()
        let error = try pipeEnds()
        let standardInput: (read: Int32, write: Int32)
        if input != nil {
            standardInput = try pipeEnds()
        } else {
            standardInput = (open("/dev/null", O_RDONLY | O_CLOEXEC), -1)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardInput.read, STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, output.write, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, error.write, STDERR_FILENO)
        var arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &arguments, environ)
        for descriptor in [standardInput.read, output.write, error.write] { close(descriptor) }
        guard spawned == 0 else {
            for descriptor in [standardInput.write, output.read, error.read] where descriptor >= 0 { close(descriptor) }
            throw Failure("cannot run \(executable): \(String(cString: strerror(spawned)))")
        }
        // Input, standard error and standard output each on a thread of their own, so that
        // no pipe can fill up and stop the program.
        let writing = standardInput.write
        let writer = DedicatedThread.start(named: "envctl-stdin") { [input] in
            if let input, writing >= 0 {
                // A program that stops reading early closes the pipe: the rest is dropped.
                try? FileDescriptorWriter.writeAll(input, to: writing)
                close(writing)
            }
        }
        let errorDescriptor = error.read
        let errorReader = DedicatedThread.start(named: "envctl-stderr") { readToEnd(errorDescriptor) }
        let outputData = readToEnd(output.read)
        let errorData = errorReader.join()
        writer.join()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Command.Result(status: code, output: outputData, error: errorData)
    }
}

/// The two files `credential set` writes.
enum CredentialFiles {
    /// Replaces the files with their contents, all or none (``FileTransaction``), holding the
    /// lock of each one's directory, taken in order (the credential store's first, whose
    /// directory holds the journal); a file that already holds its contents is left as it is.
    static func write(_ files: [(contents: Data, file: DropInFile)], command: String) throws {
        func locked(_ index: Int, _ body: () throws -> Void) throws {
            guard index < files.count else { return try body() }
            try files[index].file.withLock { try locked(index + 1, body) }
        }
        try locked(0) {
            for _ in 0..<5 {
                var changes: [FileTransaction.Change] = []
                for (contents, file) in files {
                    let old = try file.read()?.contents
                    if old != contents { changes.append(.init(file: file, expected: old, contents: contents)) }
                }
                if changes.isEmpty { return }
                do {
                    try FileTransaction(
                        journalDirectory: files[0].file.directory, command: command, note: { printError($0) }
                    ).commit(changes)
                    return
                } catch is FileTransaction.Changed {
                    continue
                }
            }
            throw Failure(
                "\(files.map(\.file.path).joined(separator: " or ")) kept changing while envctl wrote them (something writes them without envctl's lock); nothing was written"
            )
        }
    }

    /// What a journal in the credential store may name (``JournalScope``): a credential in the
    /// store itself (a name that is not hidden), or a unit drop-in `credential set` writes
    /// (`UNIT.d/90-credential-NAME.conf` in the unit directory).
    static func journalScope(store: String, unitDirectory: String) -> JournalScope {
        let resolvedStore = DirectorySafety.realPath(store) ?? store
        let resolvedUnits = DirectorySafety.realPath(unitDirectory) ?? unitDirectory
        return JournalScope(
            description: "a credential in \(store) or a unit drop-in 90-credential-*.conf that credential set writes"
        ) { path in
            let directory = PathNames.directory(of: path)
            let name = PathNames.lastComponent(of: path)
            if directory == resolvedStore { return !name.hasPrefix(".") }
            return PathNames.directory(of: directory) == resolvedUnits
                && directory.hasSuffix(".d") && name.hasPrefix("90-credential-") && name.hasSuffix(".conf")
        }
    }

    /// The unit drop-in that gives the daemon the encrypted credential.
    static func dropIn(name: String, path: String, key: String) -> String {
        """
        # Written by envctl credential set: the credential \(name), encrypted with systemd-creds
        # (key: \(key)); the daemon reads it as ${credential:\(name)}. systemd decrypts it when the
        # unit starts: restart the unit after a change.
        [Service]
        LoadCredentialEncrypted=\(name):\(path)

        """
    }
}

struct CredentialList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the credentials the configuration uses, and whether the unit gives each.",
        discussion: """
            Reads every file of the configuration (Environments.plist and its drop-ins, found as show \
            finds them: the running daemon's directory with --app-name, else --config-dir, \
            $CONFIGURATION_DIRECTORY or /etc/<app-name>), every section of each (Common, every \
            environment, Instances), and lists each ${credential:NAME} with its file, line and key. For \
            each name it says which setting of the unit gives it, and in which file, as the unit file and \
            its drop-ins say (systemctl cat UNIT, read as systemd applies them: a later setting of a name \
            replaces an earlier one): LoadCredential=, LoadCredentialEncrypted=, SetCredential=, \
            SetCredentialEncrypted= (their data is never shown) or ImportCredential= (systemd 254 and \
            later); and, while the unit runs, whether the running \
            daemon has it (/run/credentials/UNIT/NAME exists: a credential added since it started is not \
            there until a restart). No credential's text is read or shown.

            Exit status 1 when a credential the configuration uses is not given by the unit (or, with \
            the unit running, the daemon does not have it), so that a deployment script can stop; 0 \
            otherwise, also when systemd cannot be asked (then nothing is known about the unit, and \
            envctl says so). Credentials the unit gives that the configuration does not use are listed \
            at the end.
            """)

    @OptionGroup var location: LocationOptions
    @OptionGroup var unitOptions: UnitOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        let unit = try unitOptions.unitName(location)
        let files = try configurationFiles()
        let references = try files.flatMap { try CredentialReferences.scan(file: $0) }
        let given = UnitCredentials.ask(unit: unit)
        let report = CredentialReport(unit: unit, references: references, unitCredentials: given)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(ControlCharacters.escapedJSON(String(decoding: try encoder.encode(report), as: UTF8.self)))
        } else {
            for line in report.lines() { printLine(line) }
        }
        if report.credentials.contains(where: { $0.given == false || $0.runningDaemonHasIt == false }) {
            throw ExitCode(1)
        }
    }

    /// The main file (when it is there) and the drop-ins.
    func configurationFiles() throws -> [String] {
        let options = try location.filesOptions()
        let found: ConfigurationLocation
        do {
            found = try ConfigurationLocation.resolved(options.anchoringPaths())
            return (FileManager.default.fileExists(atPath: found.mainFile) ? [found.mainFile] : [])
                + (try found.dropInFiles())
        } catch {
            throw Failure("\(error)")
        }
    }
}

/// A `${credential:NAME}` in a file.
struct CredentialReference: Codable, Equatable {
    var name: String
    var file: String
    /// The line of the reference (XML files; `nil` in a binary property list).
    var line: Int?
    /// The key whose value holds it, with its section first: `Common.Database.Password`.
    var key: String

    var place: String { line.map { "\(file):\($0)" } ?? file }
}

/// Finds the `${credential:NAME}` references of a configuration file.
enum CredentialReferences {
    static func scan(file: String) throws -> [CredentialReference] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw Failure("cannot read \(file); run envctl check for the reason")
        }
        let root: Any
        do {
            root = try PropertyListReading.value(data, file: file).anyValue
        } catch {
            throw Failure("\(file) is not a property list; run envctl check for the reason")
        }
        let text = data.first == UInt8(ascii: "b") ? nil : String(data: data, encoding: .utf8)
        var found: [CredentialReference] = []
        walk(root, path: []) { path, string in
            for name in names(in: string) {
                let keys = path.filter { !$0.hasPrefix("[") }
                let line = text.flatMap { text in
                    KeyLines.range(of: keys.map(KeyLines.keyElement) + ["${credential:\(name)}"], in: text).map {
                        KeyLines.line(at: $0.lowerBound, in: text)
                    }
                }
                found.append(
                    CredentialReference(
                        name: name, file: file, line: line,
                        key: path.reduce("") { $1.hasPrefix("[") ? $0 + $1 : SettingPath.joined($0, $1) }))
            }
        }
        return found.sorted { ($0.line ?? 0, $0.key) < ($1.line ?? 0, $1.key) }
    }

    /// Calls `body` for every string in `value`, with its key path (array elements as `[N]`),
    /// dictionaries' keys in sorted order.
    private static func walk(_ value: Any, path: [String], _ body: ([String], String) -> Void) {
        switch value {
        case let string as String:
            body(path, string)
        case let dictionary as [String: Any]:
            for key in dictionary.keys.sorted() { walk(dictionary[key]!, path: path + [key], body) }
        case let array as [Any]:
            for (index, element) in array.enumerated() { walk(element, path: path + ["[\(index)]"], body) }
        default:
            break
        }
    }

    /// The names of the `${credential:NAME}` in `text`; `$${` is a literal `${`, not a reference.
    static func names(in text: String) -> [String] {
        var names: [String] = []
        var rest = text[...]
        while let start = rest.firstRange(of: "${") {
            let escaped = start.lowerBound > rest.startIndex && rest[rest.index(before: start.lowerBound)] == "$"
            let body = rest[start.upperBound...]
            guard let end = body.firstIndex(of: "}") else { break }
            let reference = body[..<end]
            if !escaped, reference.hasPrefix("credential:") {
                let name = String(reference.dropFirst("credential:".count))
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
            rest = body[body.index(after: end)...]
        }
        return names
    }
}

/// The credentials a unit gives: its credential settings as its unit file and drop-ins say
/// (`systemctl cat`: `systemctl show` prints these settings as `[unprintable]` on systemd 252),
/// in the order systemd applies them.
struct UnitCredentials {
    /// A setting that gives a credential: `LoadCredentialEncrypted=db-password:/etc/...` in a
    /// file. A `SetCredential*=`'s data (the secret, or its ciphertext) is never kept.
    struct Setting: Codable, Equatable {
        var setting: String
        /// The credential's name; for `ImportCredential=`, the glob.
        var name: String
        /// What follows the name: a path for `LoadCredential*=`; `nil` for the others.
        var path: String?
        /// The unit file or drop-in that says it.
        var file: String?

        var shown: String {
            switch setting {
            case "SetCredential", "SetCredentialEncrypted": "\(setting)=\(name):(data not shown)"
            default: "\(setting)=\(name)" + (path.map { ":" + $0 } ?? "")
            }
        }
    }

    var settings: [Setting] = []
    /// `ActiveState`.
    var activeState: String?
    /// `LoadState`: `not-found` for a unit systemd does not know.
    var loadState: String?
    /// Why systemd could not be asked, or `nil`.
    var unknown: String?

    static func ask(unit: String) -> UnitCredentials {
        guard FileManager.default.fileExists(atPath: "/run/systemd/system") else {
            return UnitCredentials(unknown: "systemd is not running here")
        }
        guard let state = try? Command.run("systemctl", ["show", unit, "-p", "ActiveState", "-p", "LoadState"]),
            state.status == 0
        else {
            return UnitCredentials(unknown: "systemctl show \(unit) failed")
        }
        var parsed = UnitCredentials()
        for line in String(decoding: state.output, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("ActiveState=") { parsed.activeState = String(line.dropFirst(12)) }
            if line.hasPrefix("LoadState=") { parsed.loadState = String(line.dropFirst(10)) }
        }
        if parsed.loadState == "not-found" { return parsed }
        guard let files = try? Command.run("systemctl", ["cat", unit, "--no-pager"]), files.status == 0 else {
            parsed.unknown = "systemctl cat \(unit) failed"
            return parsed
        }
        parsed.settings = parse(String(decoding: files.output, as: UTF8.self)).settings
        return parsed
    }

    /// The credential settings of `systemctl cat`'s output (each file after a `# /path` line),
    /// as systemd applies them: in the `[Service]` section, in file order; an empty
    /// `LoadCredential=` or `LoadCredentialEncrypted=` clears both (one list in systemd), as
    /// an empty `SetCredential*=` clears those and an empty `ImportCredential=` the imports;
    /// a later setting of a name replaces an earlier one of its list (`LoadCredentialEncrypted=`
    /// a `LoadCredential=`).
    static func parse(_ catOutput: String) -> UnitCredentials {
        var parsed = UnitCredentials()
        var file: String?
        var section = ""
        var pending = ""
        var previous: Substring = ""
        for raw in catOutput.split(separator: "\n", omittingEmptySubsequences: false) {
            defer { previous = raw }
            let continued = !pending.isEmpty
            var line = pending + String(raw)
            pending = ""
            // A file's header: `# /path`, first or after an empty line (a comment such as
            // `# /run/app holds the socket` is no header: it has spaces, and follows text).
            if !continued, raw.hasPrefix("# /"), !raw.dropFirst(2).contains(" "),
                String(previous).trimmingWhitespace().isEmpty
            {
                file = String(raw.dropFirst(2))
                section = ""
                continue
            }
            if line.hasSuffix("\\") {
                pending = String(line.dropLast()) + " "
                continue
            }
            line = line.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                section = line
                continue
            }
            guard section == "[Service]", let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals]).trimmingWhitespace()
            let value = String(line[line.index(after: equals)...]).trimmingWhitespace()
            let family: [String]
            switch key {
            case "LoadCredential", "LoadCredentialEncrypted": family = ["LoadCredential", "LoadCredentialEncrypted"]
            case "SetCredential", "SetCredentialEncrypted": family = ["SetCredential", "SetCredentialEncrypted"]
            case "ImportCredential": family = ["ImportCredential"]
            default: continue
            }
            if value.isEmpty {
                parsed.settings.removeAll { family.contains($0.setting) }
                continue
            }
            let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
            let name = key == "ImportCredential" ? value : parts[0]
            let path = key.hasPrefix("Load") && parts.count == 2 ? parts[1] : nil
            parsed.settings.removeAll { family.contains($0.setting) && $0.name == name }
            parsed.settings.append(Setting(setting: key, name: name, path: path, file: file))
        }
        return parsed
    }

    /// The settings that give credential `name`.
    func settings(giving name: String) -> [Setting] {
        settings.filter { $0.setting == "ImportCredential" ? fnmatch($0.name, name, 0) == 0 : $0.name == name }
    }

    /// The names the settings give (a glob for `ImportCredential=`).
    var names: [String] { settings.map(\.name) }
}

/// What `credential list` prints.
struct CredentialReport: Encodable {
    struct Entry: Encodable {
        var name: String
        var references: [CredentialReference]
        var givenBy: [UnitCredentials.Setting]
        /// Whether the unit gives it; `nil` when systemd could not be asked.
        var given: Bool?
        /// While the unit runs: whether the daemon has it; else `nil`.
        var runningDaemonHasIt: Bool?
    }

    var unit: String
    /// Why nothing is known about the unit, or `nil`.
    var unitUnknown: String?
    var active: Bool
    var credentials: [Entry]
    /// Names the unit gives that no file uses.
    var unused: [String]

    init(unit: String, references: [CredentialReference], unitCredentials: UnitCredentials) {
        self.unit = unit
        var unknown = unitCredentials.unknown
        if unknown == nil, unitCredentials.loadState == "not-found" || unitCredentials.loadState == nil {
            unknown = "systemd does not know \(unit)"
        }
        unitUnknown = unknown
        active = ["active", "reloading", "activating"].contains(unitCredentials.activeState ?? "")
        var names: [String] = []
        for reference in references where !names.contains(reference.name) { names.append(reference.name) }
        let active = self.active
        credentials = names.map { name in
            let givenBy = unitCredentials.settings(giving: name)
            var has: Bool?
            if unknown == nil, active {
                var status = stat()
                let path = "/run/credentials/\(unit)/\(name)"
                if lstat(path, &status) == 0 {
                    has = true
                } else if errno == ENOENT {
                    has = false
                }
            }
            return Entry(
                name: name, references: references.filter { $0.name == name }, givenBy: givenBy,
                given: unknown == nil ? !givenBy.isEmpty : nil, runningDaemonHasIt: has)
        }
        unused = unknown == nil ? unitCredentials.names.filter { !names.contains($0) } : []
    }

    func lines() -> [String] {
        var lines: [String] = []
        if let unitUnknown { lines.append("\(unit): not known (\(unitUnknown)); the files' credentials:") }
        if credentials.isEmpty { lines.append("the configuration uses no credential (no ${credential:NAME})") }
        for entry in credentials {
            lines.append("\(entry.name)")
            for reference in entry.references { lines.append("  used at \(reference.place) (\(reference.key))") }
            switch entry.given {
            case true?:
                for setting in entry.givenBy {
                    lines.append("  given by \(setting.shown)" + (setting.file.map { " (\($0))" } ?? ""))
                }
            case false?:
                lines.append(
                    "  not given by \(unit): envctl credential set \(entry.name) --unit \(unit) (LoadCredentialEncrypted=), or add LoadCredential=\(entry.name):/path/to/secret"
                )
            case nil:
                break
            }
            switch entry.runningDaemonHasIt {
            case true?: lines.append("  the running daemon has it")
            case false? where entry.given == true:
                lines.append(
                    "  the running daemon does not have it: systemctl restart \(unit) (credentials are given at start)")
            case false?: lines.append("  the running daemon does not have it")
            case nil: if entry.given != nil, !active { lines.append("  \(unit) is not running") }
            }
        }
        for name in unused { lines.append("\(name): given by \(unit), used by no file") }
        return lines
    }
}
