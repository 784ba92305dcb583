import ArgumentParser
import Environments
import EnvironmentsEditing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit a drop-in in your editor, as systemctl edit does; it is installed only if the result is valid.",
        discussion: """
            Opens a temporary copy of Environments.plist.d/NAME.plist (--drop-in, default 90-local; a \
            commented template when it does not exist yet) in $VISUAL, $EDITOR, editor or vi. When the \
            editor exits, the whole resulting configuration is checked as for set (every environment the \
            files define, and the running daemon's own validation when one is found); only a valid \
            result replaces the drop-in, atomically. On an invalid one envctl shows the error with the \
            line in the edited copy and asks whether to edit again or discard; without a terminal to ask \
            on, it keeps the copy (in $TMPDIR, else /tmp: envctl-edit-XXXXXX/NAME.plist, mode 0600), \
            says where and how to install it once fixed, and exits 1. An unchanged copy installs nothing. The editor runs without holding \
            anything; if the drop-in changed meanwhile (another envctl, or by hand), nothing is \
            installed: envctl says so, keeps your version in the temporary copy and exits 1. So too \
            when the daemon it checks with is not what it was when the editor opened: restarted into \
            another environment or instance, stopped, or started where none ran (the environment the \
            edit was opened for would be checked by no daemon). The file keeps its owner, group, mode \
            and ACLs, and a new one takes them as for set. As for set, every key the edit writes or \
            removes must take effect (unless --allow-shadowed): one that another source outweighs is \
            an invalid result, shown as one. So is, as set refuses it, a key written that the \
            application's declaration does not cover (the running daemon's, --schema's, or \
            /usr/share/<app-name>/schema.json), with the declared key spelled nearly the same, unless \
            --allow-undeclared.
            """)

    @OptionGroup var location: LocationOptions

    @Option(name: .customLong("drop-in"), help: "The drop-in's name, with or without .plist.")
    var dropIn: String?

    @OptionGroup var shadow: ShadowOptions

    @OptionGroup var declared: DeclaredKeyOptions

    @OptionGroup var schema: SchemaOptions

    func run() throws {
        try location.refuseDaemon(with: schema)
        var change = try DropInChange(location: location, dropIn: dropIn)
        // Before the editor opens: what the edited keys are checked against, as for set.
        let declaration = try DeclaredKeyOptions.known(schema: schema, location: location, daemon: change.client)
        // A value the application's declaration refuses is never written (in any environment
        // envctl checks; the daemon checks its own).
        change.valueDeclaration = declaration?.declaration
        let original = try change.current()
        let start = original ?? Data(Self.template(change).utf8)
        let scratch = try Self.scratchFile(named: change.name, contents: start)
        let scratchDirectory = PathNames.directory(of: scratch)
        // Once edited, the copy is kept whenever it cannot be installed for any reason but
        // the operator's choice to discard it.
        var keepScratch = false
        defer { if !keepScratch { try? FileManager.default.removeItem(atPath: scratchDirectory) } }
        while true {
            try Self.runEditor(on: scratch)
            let edited = try Self.readEdited(scratch)
            if edited == start {
                printLine("\(change.path): no changes; nothing installed")
                return
            }
            let outcome: Result<DropInEditor.Outcome, Failure>
            do {
                outcome = try install(edited, over: original, with: change, declaration: declaration, scratch: scratch)
            } catch {
                keepScratch = true
                throw error
            }
            switch outcome {
            case .success(let installed):
                for note in installed.notes { printError(note) }
                printLine("\(change.path): installed (\(installed.checked))")
                return
            case .failure(let failure):
                try Self.rejected(failure, change: change, scratch: scratch, keepScratch: &keepScratch)
            }
        }
    }

    /// The edited copy's bytes.
    private static func readEdited(_ scratch: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: scratch) else {
            let reason = access(scratch, F_OK) == 0 ? "it cannot be read" : "it no longer exists"
            throw Failure("cannot read the edited copy \(scratch): \(reason)")
        }
        return data
    }

    /// `$TMPDIR`, else `/tmp`, as Foundation's `NSTemporaryDirectory()` says on Linux.
    static func temporaryDirectory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard let directory = environment["TMPDIR"], !directory.isEmpty else { return "/tmp" }
        return directory
    }

    /// Installs `edited`, checked, over the drop-in as it was when the editor opened (the
    /// editor ran without the lock; installing takes it). A refusal by the check is the
    /// result's failure; anything else that stops the install throws, naming the kept copy.
    private func install(
        _ edited: Data, over original: Data?, with change: DropInChange, declaration: KnownDeclaration?,
        scratch: String
    ) throws -> Result<DropInEditor.Outcome, Failure> {
        do {
            return try change.install(
                edited, over: original, allowShadowed: shadow.allowShadowed,
                declaration: declared.enforced(declaration), override: DeclaredKeyOptions.override)
        } catch is DropInFile.Changed {
            throw Failure(
                "\(change.path) was changed by someone else while you edited it; your version was not installed and is kept in \(scratch). Run envctl edit again and carry your changes over (diff -u \(change.path) \(scratch) shows both)."
            )
        } catch let changed as DropInChange.DaemonChanged {
            // Checked against what runs now, the environment the edit was opened for
            // may be left unchecked: the operator edits again, against what runs now.
            throw Failure(
                "\(changed.description). Your version was not installed and is kept in \(scratch); to check it against what runs now and install it: "
                    + Self.installCommand(from: scratch))
        } catch let failure as Failure {
            throw Failure("\(failure.description); your version is kept in \(scratch)")
        }
    }

    /// A copy the check refused: offered for editing again on a terminal (returns to edit
    /// again); else kept where only its owner reads it, or discarded when the operator says so
    /// (both throw).
    private static func rejected(_ failure: Failure, change: DropInChange, scratch: String, keepScratch: inout Bool)
        throws
    {
        // The check read the edited text as the drop-in: its lines are the copy's,
        // so the error names the copy, which holds them.
        let error = failure.description.replacingEvery(change.path, with: scratch)
        guard canAskToEditAgain else {
            // No terminal to edit again on (a script as $EDITOR, a pipe): the text is
            // kept, never lost, where only its owner can read it.
            keepScratch = true
            throw Failure(
                "\(error); \(change.path) was not changed: your rejected version is kept in \(scratch) "
                    + "(mode 0600, yours; it may hold secrets): fix it there and install it with "
                    + installCommand(from: scratch) + ", then delete it")
        }
        printError(error)
        guard askToEditAgain() else {
            throw Failure("\(change.path): discarded; nothing was installed")
        }
    }

    /// A new drop-in's text: a comment that says what goes where, around an empty dictionary.
    static func template(_ change: DropInChange) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <!-- \(change.path)

             Applied after Environments.plist and the drop-ins whose names sort before this one.
             Top-level keys: Common (every environment), one dictionary per environment (Release,
             Staging, ...), Instances (one dictionary per instance), Secrets and RestartRequired
             (arrays of key paths). For example:

             <key>Common</key>
             <dict>
                 <key>LogLevel</key>
                 <string>debug</string>
             </dict>
        -->
        <dict>
        </dict>
        </plist>

        """
    }

    /// A private copy to edit: `$TMPDIR/envctl-edit-XXXXXX/NAME.plist`, readable by its owner only.
    static func scratchFile(named name: String, contents: Data) throws -> String {
        var template = Array(
            PathNames.join(temporaryDirectory(), "envctl-edit-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw Failure("cannot make a temporary directory: \(String(cString: strerror(errno)))")
        }
        let path = PathNames.join(String(cString: made), name)
        guard FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600])
        else {
            throw Failure("cannot write the temporary copy \(path)")
        }
        return path
    }

    /// The editor command: `$VISUAL`, `$EDITOR`, else `editor` or `vi`, whichever exists.
    static func editorCommand(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        for variable in ["VISUAL", "EDITOR"] {
            if let value = environment[variable]?.trimmingWhitespace(), !value.isEmpty { return value }
        }
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for name in ["editor", "vi"] where path.contains(where: { access("\($0)/\(name)", X_OK) == 0 }) {
            return name
        }
        return "vi"
    }

    /// Runs the editor on `path` in this terminal and waits for it; its command may carry
    /// arguments (`EDITOR="code --wait"`), as with git and systemctl.
    ///
    /// Spawned directly, not through Foundation's `Process`, which starts its child in a new
    /// session: an editor there has no controlling terminal, and `vi` drew nothing. Like git,
    /// envctl ignores SIGINT and SIGQUIT while the editor runs (the editor gets them with their
    /// default handling), so a Ctrl-C meant for the editor does not end envctl under it.
    static func runEditor(on path: String) throws {
        let command = editorCommand()
        let arguments = ["/bin/sh", "-c", command + " \"$1\"", "sh", path]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/sh", nil, &attributes, &argv, environ)
        guard spawned == 0 else {
            throw Failure("cannot run the editor '\(command)': \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure("waiting for the editor: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            let how = exited ? "exited with status \(code)" : "was ended by signal \(status & 0x7f)"
            throw Failure("the editor '\(command)' \(how); nothing was installed")
        }
    }

    /// This very command with `$VISUAL` copying `file` in as the edited text: what installs a
    /// kept version once it is fixed (checked as any edit is).
    static func installCommand(from file: String, arguments: [String] = CommandLine.arguments) -> String {
        let command = ["envctl"] + arguments.dropFirst()
        return "VISUAL=" + shellQuoted("cp -- " + shellQuoted(file)) + " "
            + command.map(shellQuoted).joined(separator: " ")
    }

    /// `text` as one word for `sh`: as it is when it holds only characters that need no quoting,
    /// else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@%+,")
        if !text.isEmpty, text.allSatisfy(plain.contains) { return text }
        return "'" + text.replacingEvery("'", with: "'\\''") + "'"
    }

    /// Whether there is a terminal to ask on whether to edit again.
    static var canAskToEditAgain: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1 }

    /// Asks on the terminal whether to edit again; `false` (discard) without a terminal.
    static func askToEditAgain() -> Bool {
        guard canAskToEditAgain else { return false }
        writeToStandardError("envctl: edit again? [Y/n, n discards] ")
        guard let answer = readLine(strippingNewline: true)?.trimmingWhitespace().lowercased() else {
            return false
        }
        return answer.isEmpty || answer == "y" || answer == "yes"
    }
}
