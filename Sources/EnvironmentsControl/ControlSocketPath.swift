package import Environments

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a daemon's control socket is: `configuration.varlink` in its runtime directory.
///
/// - Under systemd, the runtime directory is `$RUNTIME_DIRECTORY` (set from the unit's
///   `RuntimeDirectory=`; with several, the first).
/// - Outside systemd, `/run/<application>/` for root. For another user, as systemd's user
///   services find theirs: `$XDG_RUNTIME_DIR/<application>/`, else `/run/user/UID/<application>/`
///   when that user's runtime directory exists (a login made it), else `/run/<application>/`
///   (where root's daemon listens; a daemon of another user serves there only when the
///   directory exists and it may write it, else it has no runtime directory).
///   For an instance, its own subdirectory (`/run/<application>/<instance>/`), as a template
///   unit's `RuntimeDirectory=<application>/%i` makes it.
///
/// The application name and the instance become directories: each must be a valid
/// ``PathComponentName`` (no `/`, not `..`, what systemd allows), or there is no path.
package enum ControlSocketPath {
    /// The daemon's socket path, or `nil` when there is no runtime directory to put it in.
    ///
    /// - Throws: `EnvironmentError.Code.invalidName` for a name that cannot be a directory.
    package static func forDaemon(
        applicationName: String, instance: String? = nil, processEnvironment: [String: String],
        isRoot: Bool = geteuid() == 0
    ) throws(EnvironmentError) -> String? {
        if let runtime = runtimeDirectory(in: processEnvironment) {
            return join(runtime, ControlInterface.socketFileName)
        }
        guard
            let path = try forApplication(
                applicationName, instance: instance, processEnvironment: processEnvironment, isRoot: isRoot)
        else { return nil }
        // Below /run, only root may make a directory: another user's daemon serves there only
        // in one an administrator made for it.
        let directory = PathNames.directory(of: path)
        if !isRoot, path.hasPrefix("/run/"), !path.hasPrefix("/run/user/"), access(directory, W_OK | X_OK) != 0 {
            return nil
        }
        return path
    }

    /// The socket of the daemon called `applicationName`, by convention (`RuntimeDirectory=NAME`).
    ///
    /// - Throws: `EnvironmentError.Code.invalidName` for a name that cannot be a directory.
    package static func forApplication(
        _ applicationName: String, instance: String? = nil, processEnvironment: [String: String],
        isRoot: Bool = geteuid() == 0
    ) throws(EnvironmentError) -> String? {
        _ = try PathComponentName(applicationName, kind: .applicationName, from: "the application name")
        if let instance { _ = try PathComponentName(instance, kind: .instance, from: "the instance") }
        let directory = instance.map { join(applicationName, $0) } ?? applicationName
        guard !isRoot else { return join("/run/\(directory)", ControlInterface.socketFileName) }
        if let runtime = processEnvironment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return join(join(runtime, directory), ControlInterface.socketFileName)
        }
        let user = userRuntimeDirectory
        var status = stat()
        if stat(user, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid() {
            return join(join(user, directory), ControlInterface.socketFileName)
        }
        return join("/run/\(directory)", ControlInterface.socketFileName)
    }

    /// This user's runtime directory as a login makes it, `/run/user/UID`.
    package static var userRuntimeDirectory: String { "/run/user/\(getuid())" }

    /// What to do when there is no runtime directory for a daemon's socket: the variables and
    /// the directories looked for, for a message.
    package static let noRuntimeDirectoryHint =
        "run it under systemd with RuntimeDirectory= (which sets $RUNTIME_DIRECTORY), "
        + "or set $RUNTIME_DIRECTORY or $XDG_RUNTIME_DIR to a directory this user owns "
        + "(a login's is /run/user/UID), or run it as root (/run/NAME)"

    /// The socket of the process `pid`: its own `$RUNTIME_DIRECTORY` (from `/proc/PID/environ`,
    /// readable by root and the process's user), else the control socket it listens on (its
    /// file descriptors, from `/proc/PID/fd` and `/proc/net/unix`: a daemon started by hand,
    /// whose executable name need not be its application's), else the caller's
    /// `$RUNTIME_DIRECTORY` (an `ExecReload=` command shares its unit's, and a sandboxed unit may
    /// hide the main process's `/proc` entry from it), else its name's conventional directory.
    /// The caller checks that `pid` is the one listening (``VarlinkClient/expectedProcess``).
    package static func forProcess(_ pid: Int32, processEnvironment: [String: String]) -> String? {
        if let environ = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")), !environ.isEmpty {
            var variables: [String: String] = [:]
            for entry in environ.split(separator: 0) {
                let text = String(decoding: entry, as: UTF8.self)
                guard let equals = text.firstIndex(of: "=") else { continue }
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            if let runtime = runtimeDirectory(in: variables) { return join(runtime, ControlInterface.socketFileName) }
        }
        if let listening = listeningSocket(of: pid) { return listening }
        if let runtime = runtimeDirectory(in: processEnvironment) {
            return join(runtime, ControlInterface.socketFileName)
        }
        guard let name = KernelFile.line("/proc/\(pid)/comm") else { return nil }
        return name.isEmpty ? nil : try? forApplication(name, processEnvironment: processEnvironment)
    }

    /// The path of a listening Unix socket named ``ControlInterface/socketFileName`` among the
    /// file descriptors of `pid`, if `/proc` lets this process see them.
    ///
    /// `/proc/net/unix` lists one socket a line (`Num RefCount Protocol Flags Type St Inode
    /// Path`); a listening socket has the flag `__SO_ACCEPTCON` (0x10000). Reading it costs a
    /// line per socket of the network namespace: it is read only when the process's environment
    /// names no runtime directory, and at most ``socketTableLimit`` bytes of it.
    static func listeningSocket(of pid: Int32) -> String? {
        let directory = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var inodes = Set<Substring>()
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + descriptor),
                target.hasPrefix("socket:["), target.hasSuffix("]")
            else { continue }
            inodes.insert(Substring(target.dropFirst("socket:[".count).dropLast()))
        }
        // Read to its end: `String(contentsOfFile:)` stops after the kernel's first page (about
        // 48 sockets), and a host has hundreds. Bounded (about 300,000 sockets' lines).
        guard !inodes.isEmpty, let data = KernelFile.bytes("/proc/net/unix", limit: socketTableLimit) else {
            return nil
        }
        let table = String(decoding: data, as: UTF8.self)
        let suffix = "/" + ControlInterface.socketFileName
        for line in table.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", maxSplits: 7, omittingEmptySubsequences: true)
            guard columns.count == 8, inodes.contains(columns[6]),
                let flags = Int(columns[3], radix: 16), flags & 0x10000 != 0
            else { continue }
            let path = String(columns[7])
            if path.hasSuffix(suffix) { return path }
        }
        return nil
    }

    /// How much of `/proc/net/unix` ``listeningSocket(of:)`` reads at most: 32 MiB.
    static let socketTableLimit = 32 << 20

    /// The first directory of `$RUNTIME_DIRECTORY`.
    package static func runtimeDirectory(in processEnvironment: [String: String]) -> String? {
        guard let first = processEnvironment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !first.isEmpty else {
            return nil
        }
        return String(first)
    }

    private static func join(_ directory: String, _ name: String) -> String {
        PathNames.join(directory, name)
    }
}
