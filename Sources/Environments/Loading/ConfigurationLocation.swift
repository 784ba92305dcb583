#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where the configuration files are: the main file and its drop-in directory.
///
/// The directory is, in order: the explicit ``EnvironmentOptions/configDirectory``, else the
/// first directory of `$CONFIGURATION_DIRECTORY` (systemd joins several with `:`) that holds
/// the main file, else `/etc/<applicationName>/`.
///
/// A directory named explicitly (``EnvironmentOptions/configDirectory`` or
/// `$CONFIGURATION_DIRECTORY`) must exist: loading fails if it does not, as a typo must not run
/// a service on its built-in configuration. Only `/etc/<applicationName>/` may be missing. A
/// directory that cannot be looked at (a dangling or looping symbolic link, not a directory,
/// no permission, an I/O error) is an error wherever it comes from.
package struct ConfigurationLocation: Sendable, Hashable {
    /// The directory searched.
    package var directory: String
    /// The main file, `<directory>/Environments.plist`.
    package var mainFile: String
    /// The drop-in directory, `<directory>/Environments.plist.d`.
    package var dropInDirectory: String
    /// Every directory that was considered, in order, for error messages.
    package var searchedDirectories: [String]

    /// Resolves the location for the given options.
    ///
    /// This never fails: a directory that is missing or cannot be looked at is chosen as it is,
    /// and loading from it reports the problem.
    package init(options: EnvironmentOptions) {
        self = Self.resolve(options).location
    }

    private init(directory: String, fileName: String, searched: [String]) {
        self.directory = directory
        mainFile = PathNames.join(directory, fileName)
        dropInDirectory = mainFile + ".d"
        searchedDirectories = searched
    }

    /// The location for `options`, or why it cannot be used: a directory named explicitly that
    /// does not exist, or a directory searched that cannot be looked at.
    package static func resolved(_ options: EnvironmentOptions) throws(EnvironmentError)
        -> ConfigurationLocation
    {
        let (location, problem) = resolve(options)
        if let problem { throw problem }
        return location
    }

    /// The candidate directories, in order, with what named each (`nil` for the default).
    private static func candidates(_ options: EnvironmentOptions) -> [(directory: String, namedBy: String?)] {
        if let explicit = options.configDirectory, !explicit.isEmpty { return [(explicit, "--config-dir")] }
        var candidates: [(String, String?)] = []
        if let fromSystemd = options.processEnvironment[EnvironmentOptions.configurationDirectoryVariable] {
            candidates += fromSystemd.split(separator: ":").filter { !$0.isEmpty }.map {
                (String($0), "$\(EnvironmentOptions.configurationDirectoryVariable)")
            }
        }
        candidates.append(
            (PathNames.join(options.systemConfigurationRoot, options.applicationName), nil))
        return candidates
    }

    /// Walks the candidates: the first that holds the main file (or something in its place)
    /// wins; a named one that does not exist, or any that cannot be looked at, stops the walk
    /// with an error.
    private static func resolve(_ options: EnvironmentOptions) -> (location: ConfigurationLocation, EnvironmentError?) {
        let candidates = candidates(options)
        let searched = candidates.map(\.directory)
        func location(_ directory: String) -> ConfigurationLocation {
            ConfigurationLocation(directory: directory, fileName: options.fileName, searched: searched)
        }
        for (directory, namedBy) in candidates {
            if namedBy == nil, !PathComponentName.isValid(options.applicationName, kind: .applicationName) {
                // `/etc/<name>/` must be a directory of /etc, whatever the name holds.
                do throws(EnvironmentError) {
                    _ = try PathComponentName(
                        options.applicationName, kind: .applicationName, from: "EnvironmentOptions.applicationName")
                } catch {
                    return (location(directory), error)
                }
            }
            switch FileAccess.presence(of: directory, subject: "the configuration directory") {
            case .unusable(let error):
                return (location(directory), error)
            case .present(isDirectory: false):
                return (
                    location(directory),
                    EnvironmentError(
                        .fileUnreadable, "the configuration directory is not a directory", file: directory,
                        hint: "Make it a directory that holds \(options.fileName) (`ls -ld \(directory)`)")
                )
            case .absent:
                guard let namedBy else { continue }
                return (
                    location(directory),
                    EnvironmentError(
                        .fileNotFound, "the configuration directory (from \(namedBy)) does not exist", file: directory,
                        hint:
                            "Correct the name, or create the directory (empty, to run on the built-in configuration): a directory named explicitly must exist"
                    )
                )
            case .present(isDirectory: true):
                let mainFile = PathNames.join(directory, options.fileName)
                if !FileAccess.isAbsent(mainFile) || options.candidateDocuments[mainFile] != nil {
                    return (location(directory), nil)
                }
            }
        }
        return (location(searched[0]), nil)
    }

    /// Whether a drop-in directory's entry called `name` is a drop-in: `*.plist`, not hidden.
    @Sendable package static func isDropInFileName(_ name: String) -> Bool {
        name.hasSuffix(".plist") && !name.hasPrefix(".")
    }

    /// The drop-in files, `*.plist` in lexical (byte) order, as systemd orders its own
    /// drop-ins. Hidden files and other names are ignored.
    ///
    /// No drop-in directory is no drop-ins; one that cannot be listed (a dangling or looping
    /// link, no permission, an I/O error) or that is not a directory is an error.
    package func dropInFiles() throws(EnvironmentError) -> [String] {
        let names: [String]
        switch FileAccess.presence(of: dropInDirectory, subject: "the drop-in directory") {
        case .absent:
            return []
        case .unusable(let error):
            throw error
        case .present(isDirectory: false):
            throw EnvironmentError(
                .invalidDropIn, "the drop-in path is not a directory", file: dropInDirectory,
                hint: "Remove it, or make it a directory of *.plist files")
        case .present(isDirectory: true):
            names = try FileAccess.entries(of: dropInDirectory, subject: "the drop-in directory")
        }
        return
            names
            .filter(Self.isDropInFileName)
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .map { PathNames.join(dropInDirectory, $0) }
    }
}
