import Environments

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A file for `Check` to read in place of the one on disk, or as a new drop-in: what
/// `envctl edit`, `set` and `unset` send before they install the file.
package struct CheckCandidate: Codable, Sendable, Hashable {
    /// The path relative to the configuration directory: `Environments.plist`, or
    /// `Environments.plist.d/NAME.plist`.
    package var path: String
    /// The file's whole text (an XML property list).
    package var contents: String

    package init(path: String, contents: String) {
        self.path = path
        self.contents = contents
    }

    /// `relative` as an absolute path in `directory`, or `nil` unless it names the main file
    /// (`fileName`) or a drop-in (`fileName.d/NAME.plist`, `NAME` a valid drop-in name,
    /// ``PathComponentName``): a caller cannot
    /// make the daemon read anything else.
    package static func absolutePath(_ relative: String, directory: String, fileName: String) -> String? {
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let isMain = parts == [fileName]
        let isDropIn =
            parts.count == 2 && parts[0] == fileName + ".d" && parts[1].hasSuffix(".plist")
            && PathComponentName.isValid(String(parts[1].dropLast(".plist".count)), kind: .dropIn)
        guard isMain || isDropIn else { return nil }
        return PathNames.join(directory, relative)
    }
}
