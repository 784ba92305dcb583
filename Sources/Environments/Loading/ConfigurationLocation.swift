import Foundation

/// Where the configuration files are: the main file and its drop-in directory.
///
/// The directory is, in order: the explicit ``EnvironmentOptions/configDirectory``, else the
/// first directory of `$CONFIGURATION_DIRECTORY` (systemd joins several with `:`) that holds
/// the main file, else `/etc/<applicationName>/`.
public struct ConfigurationLocation: Sendable, Hashable {
    /// The directory searched.
    public var directory: String
    /// The main file, `<directory>/Environments.plist`.
    public var mainFile: String
    /// The drop-in directory, `<directory>/Environments.plist.d`.
    public var dropInDirectory: String
    /// Every directory that was considered, in order, for error messages.
    public var searchedDirectories: [String]

    /// Resolves the location for the given options.
    public init(options: EnvironmentOptions) {
        var candidates: [String] = []
        if let explicit = options.configDirectory, !explicit.isEmpty {
            candidates = [explicit]
        } else {
            if let fromSystemd = options.processEnvironment[EnvironmentOptions.configurationDirectoryVariable] {
                candidates += fromSystemd.split(separator: ":").map(String.init).filter { !$0.isEmpty }
            }
            candidates.append("/etc/\(options.applicationName)")
        }
        let chosen =
            candidates.first {
                FileManager.default.fileExists(atPath: ($0 as NSString).appendingPathComponent(options.fileName))
            } ?? candidates[0]
        directory = chosen
        mainFile = (chosen as NSString).appendingPathComponent(options.fileName)
        dropInDirectory = mainFile + ".d"
        searchedDirectories = candidates
    }

    /// Whether a drop-in directory's entry called `name` is a drop-in: `*.plist`, not hidden.
    @Sendable package static func isDropInFileName(_ name: String) -> Bool {
        name.hasSuffix(".plist") && !name.hasPrefix(".")
    }

    /// The drop-in files, `*.plist` in lexical (byte) order, as systemd orders its own
    /// drop-ins. Hidden files and other names are ignored.
    public func dropInFiles() throws(EnvironmentError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dropInDirectory, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else {
            throw EnvironmentError(
                .invalidDropIn, "the drop-in path is not a directory", file: dropInDirectory,
                hint: "Remove it, or make it a directory of *.plist files")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: dropInDirectory)
        } catch {
            throw EnvironmentError(
                .fileUnreadable, "the drop-in directory cannot be listed: \((error as NSError).localizedDescription)",
                file: dropInDirectory)
        }
        return
            names
            .filter(Self.isDropInFileName)
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { (dropInDirectory as NSString).appendingPathComponent($0) }
    }
}
