#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The configuration extensions that `systemd-confext merge` (systemd 254 and later) has
/// merged over `/etc`, and which one a file there comes from.
///
/// `systemd-confext` mounts a read-only overlay on `/etc` whose mount source is `confext` and
/// whose layers are the extensions, topmost first, then `/etc` itself. systemd 257 names each
/// extension's layer `/run/systemd/sysext/confexts/NAME/etc` in the overlay's `lowerdir=`
/// (the directory is gone once the overlay is mounted; the name stays in the mount table). A
/// file belongs to the topmost layer that has it: for a directory extension
/// (`/run/confexts/NAME/`, `/var/lib/confexts/NAME/`, `/usr/local/lib/confexts/NAME/`,
/// `/usr/lib/confexts/NAME/`) that is looked up in the directory. An image (`NAME.raw`) cannot
/// be looked into without mounting it, so a file under `/etc` is then only *possibly* from it.
///
/// Extensions that a unit mounts for itself alone (`ExtensionDirectories=`,
/// `ExtensionImages=`) are not in this process's mount table and are not named.
package struct ConfigurationExtensions: Sendable, Equatable {
    /// The extension a file comes from.
    package struct Origin: Sendable, Hashable {
        /// The extension's name, as `systemd-confext list` shows it.
        package var name: String
        /// `true` when the file was found in the extension's directory; `false` for an image,
        /// which may or may not hold it (then the file may come from a layer below).
        package var certain: Bool

        /// `(from confext NAME)`, or `(possibly from confext image NAME)`.
        package var note: String {
            certain ? "(from confext \(name))" : "(possibly from confext image \(name))"
        }
    }

    /// One merged hierarchy: where the overlay is mounted, and its extensions, topmost first.
    package struct Merge: Sendable, Equatable {
        /// The merged hierarchy, `/etc`.
        package var hierarchy: String
        /// The extensions' names, topmost (winning) first.
        package var extensions: [String]
    }

    /// Where `systemd-confext` looks for extensions, as systemd-confext(8) lists them.
    package static let defaultSearchDirectories = [
        "/run/confexts", "/var/lib/confexts", "/usr/local/lib/confexts", "/usr/lib/confexts",
    ]

    /// The merged hierarchies.
    package var merges: [Merge]
    /// Where extensions are looked for.
    package var searchDirectories: [String]

    /// The merges in a mount table: each overlay mounted with source `confext` (the topmost one
    /// where several are stacked on one place).
    ///
    /// - Parameters:
    ///   - mounts: A parsed mount table, such as ``MountTable/parse(_:)`` of
    ///     `/proc/self/mountinfo`.
    ///   - searchDirectories: Where extensions are looked for.
    package init(mounts: [MountInfoEntry], searchDirectories: [String] = Self.defaultSearchDirectories) {
        var byHierarchy: [String: Merge] = [:]
        var order: [String] = []
        for entry in mounts where entry.fileSystemType == "overlay" && entry.source == "confext" {
            let hierarchy = entry.mountPoint
            let names = entry.overlayLowerDirectories.compactMap { Self.extensionName(layer: $0, hierarchy: hierarchy) }
            if byHierarchy[hierarchy] == nil { order.append(hierarchy) }
            byHierarchy[hierarchy] = Merge(hierarchy: hierarchy, extensions: names)
        }
        merges = order.compactMap { byHierarchy[$0] }
        self.searchDirectories = searchDirectories
    }

    /// The extensions merged in this process's mount namespace now; none if the mount table
    /// cannot be read.
    package static func current() -> ConfigurationExtensions {
        #if os(Linux)
            let mounts = (try? MountWatch().read()) ?? []
        #else
            let mounts: [MountInfoEntry] = []
        #endif
        return ConfigurationExtensions(mounts: mounts)
    }

    /// `NAME` for a layer `.../confexts/NAME/HIERARCHY` (systemd 257's layout), else `nil`
    /// (the base hierarchy, systemd's own `meta` layer).
    static func extensionName(layer: String, hierarchy: String) -> String? {
        let suffix = hierarchy == "/" ? "" : hierarchy
        guard layer.hasSuffix(suffix), layer != hierarchy else { return nil }
        let components = layer.dropLast(suffix.count).split(separator: "/")
        guard components.count >= 2, components[components.count - 2] == "confexts" else { return nil }
        return String(components[components.count - 1])
    }

    /// The extension the file at `path` comes from, or `nil` if it is not under a merged
    /// hierarchy or comes from the hierarchy's own files.
    ///
    /// - Parameter path: An absolute path, as the configuration names its files.
    package func origin(of path: String) -> Origin? {
        guard let merge = merges.last(where: { MountTable.isSameOrBelow(path, $0.hierarchy) }) else { return nil }
        let relative = merge.hierarchy == "/" ? path : String(path.dropFirst(merge.hierarchy.count))
        for name in merge.extensions {
            switch locate(name) {
            case .directory(let root):
                var info = stat()
                if lstat(root + (merge.hierarchy == "/" ? "" : merge.hierarchy) + relative, &info) == 0 {
                    return Origin(name: name, certain: true)
                }
            case .image:
                return Origin(name: name, certain: false)
            case nil:
                continue
            }
        }
        return nil
    }

    private enum Location {
        case directory(String)
        case image
    }

    /// Where the extension `name` is: a directory, an image, or not found.
    private func locate(_ name: String) -> Location? {
        for directory in searchDirectories {
            var info = stat()
            let candidate = directory + "/" + name
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return .directory(candidate) }
            for suffix in [".raw", ".confext.raw"] where stat(candidate + suffix, &info) == 0 {
                return .image
            }
        }
        return nil
    }
}
