import Environments
import EnvironmentsControl
import EnvironmentsEditing
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Whom envctl trusts: the rule of the article *Trust and identity* ("Whom envctl trusts"), in
/// its two places.
///
/// - Who may answer (``peerTrust(_:)``): every connection to a daemon, however it was found
///   (`--pid`, `--socket`, `--app-name`, `$RUNTIME_DIRECTORY`), is checked by the client before
///   anything is sent (``PeerTrust``): root, envctl's own user, the owner of the configuration
///   directory the operator names, or the owner of a runtime directory root made for it.
/// - Where envctl reads and writes (``trustedDaemonDirectory(_:of:)``): the configuration
///   directory a daemon reports is used only when envctl knows it itself (`--config-dir`,
///   `$CONFIGURATION_DIRECTORY`, `/etc/<app-name>`), or when only root or envctl's user can
///   change it; never on the daemon's word alone.
extension LocationOptions {
    /// The configuration directories envctl names itself, resolved: `--config-dir`,
    /// `$CONFIGURATION_DIRECTORY`'s, and `/etc/<app-name>` with `--app-name`.
    func ownDirectories(_ environmentVariables: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var named: [String] = []
        if let configDirectory {
            named.append(
                EnvironmentOptions.absolute(configDirectory, against: EnvironmentOptions.workingDirectory ?? "/"))
        }
        if let fromSystemd = environmentVariables[EnvironmentOptions.configurationDirectoryVariable] {
            named += fromSystemd.split(separator: ":").filter { !$0.isEmpty }.map(String.init)
        }
        if let applicationName { named.append("/etc/" + applicationName) }
        return named.compactMap(DirectorySafety.realPath)
    }

    /// Whom the client lets answer: ``PeerTrust``, with the owners of ``ownDirectories(_:)`` (the
    /// configuration the operator names belongs to them, so its daemon may run as one of them).
    func peerTrust(_ environmentVariables: [String: String] = ProcessInfo.processInfo.environment) -> PeerTrust {
        var owners: Set<UInt32> = []
        for directory in ownDirectories(environmentVariables) {
            var status = stat()
            if stat(directory, &status) == 0 { owners.insert(status.st_uid) }
        }
        return PeerTrust(additionalUsers: owners)
    }

    /// `directory`, which the daemon on `client`'s socket reports as the one it reads, when envctl
    /// may read and write there: it is one envctl names itself (``ownDirectories(_:)``), or it and
    /// its drop-in directory can be changed only by root or envctl's user (``DirectorySafety``:
    /// owned by them, writable by no one else, and so every directory above them, but for sticky
    /// ones such as `/tmp`).
    ///
    /// - Throws: A ``Failure`` that says which directory, why, and that nothing was written.
    func trustedDaemonDirectory(_ directory: String, of client: VarlinkClient) throws -> String {
        if let resolved = DirectorySafety.realPath(directory), ownDirectories().contains(resolved) {
            return directory
        }
        let trusted: Set<UInt32> = [0, geteuid()]
        let safety = DirectorySafety(owners: trusted, ancestorOwners: trusted, allowsStickyAncestors: true)
        let dropIns = PathNames.join(directory, "Environments.plist.d")
        let problem =
            safety.problem(with: directory)
            ?? (FileManager.default.fileExists(atPath: dropIns) ? safety.problem(with: dropIns) : nil)
        guard let problem else { return directory }
        let own = ["--config-dir", "$" + EnvironmentOptions.configurationDirectoryVariable, "/etc/<app-name>"]
        throw Failure(
            "refusing \(directory), the configuration directory that the daemon on \(client.path) reports: \(problem), "
                + "and envctl does not know it as that daemon's (not \(own.joined(separator: ", ")))"
                + "; nothing was read or written there. If it is the daemon's, pass --config-dir \(directory)")
    }
}
