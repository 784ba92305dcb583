#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the binary knows about itself from its build: the default environment, optionally which
/// environments may be selected, and the application's version.
///
/// By default the environment is the build configuration, compiled in: a debug build selects
/// `Debug`, a release build `Release`. An application can embed its own `Info.plist` in the
/// executable with the `EmbedInfoPlist` build-tool plugin; its `Configuration` key then names
/// the default environment and its optional `AllowedEnvironments` restricts the selection.
/// `AllowedEnvironments` is either an array (for every build) or a dictionary from build
/// configuration (`Debug`, `Release`) to an array, so that a release build can be restricted
/// while a debug build is not. Its `CFBundleShortVersionString` is the application's version,
/// which a daemon in fleet mode reports in its status key (`envctl fleet status`).
public struct BuildInfo: Sendable, Hashable {
    /// The build configuration this code was compiled in: `Debug` or `Release`.
    @usableFromInline
    package static var compiledConfiguration: String {
        #if DEBUG
            "Debug"
        #else
            "Release"
        #endif
    }

    /// The environment selected when neither a flag nor the environment variable names one.
    package var defaultEnvironment: String
    /// The environments that may be selected, or `nil` for any that the files define.
    package var allowedEnvironments: [String]?
    /// The application's version, if it gives one (`CFBundleShortVersionString`): a source that
    /// reports this host's state elsewhere (the fleet's status key) names it.
    public var version: String?

    /// Creates build information.
    ///
    /// - Parameters:
    ///   - defaultEnvironment: The environment selected when nothing else names one.
    ///   - allowedEnvironments: The environments that may be selected; `nil` for any.
    ///   - version: The application's version (`1.4.0`), reported by a daemon in fleet mode.
    public init(
        defaultEnvironment: String = BuildInfo.compiledConfiguration, allowedEnvironments: [String]? = nil,
        version: String? = nil
    ) {
        self.defaultEnvironment = defaultEnvironment
        self.allowedEnvironments = allowedEnvironments
        self.version = version
    }

    /// Reads build information from the bytes of an Info.plist (XML or binary), as the
    /// `EmbedInfoPlist` plugin embeds them.
    ///
    /// - Parameters:
    ///   - bytes: The Info.plist's bytes.
    ///   - buildConfiguration: Which entry of a dictionary-valued `AllowedEnvironments` applies.
    /// - Throws: ``EnvironmentError`` with code `malformedFile` or `invalidSection`.
    public init(infoPlist bytes: [UInt8], buildConfiguration: String = BuildInfo.compiledConfiguration) throws {
        let document = try PropertyListDocument(data: Data(bytes), file: "embedded Info.plist")
        let root = document.root
        var info = BuildInfo(defaultEnvironment: buildConfiguration)
        // Xcode leaves `$(CONFIGURATION)` unexpanded outside Xcode: keep the compiled default.
        if let name = try Self.text(root["Configuration"], key: "Configuration") { info.defaultEnvironment = name }
        info.version = try Self.text(root["CFBundleShortVersionString"], key: "CFBundleShortVersionString")
        switch root["AllowedEnvironments"] {
        case nil: break
        case .array(let names)?:
            info.allowedEnvironments = try BuildInfo.names(names, key: "AllowedEnvironments")
        case .dictionary(let byBuild)?:
            if let names = byBuild[buildConfiguration] {
                guard case .array(let names) = names else {
                    throw EnvironmentError(
                        .invalidSection, "'AllowedEnvironments.\(buildConfiguration)' must be an array of strings",
                        key: "AllowedEnvironments", file: "embedded Info.plist")
                }
                info.allowedEnvironments = try BuildInfo.names(names, key: "AllowedEnvironments")
            }
        case let other?:
            throw EnvironmentError(
                .invalidSection, "'AllowedEnvironments' is \(other.typeName.withArticle), expected an array of strings",
                key: "AllowedEnvironments", file: "embedded Info.plist")
        }
        self = info
    }

    /// The string `value` holds, trimmed; `nil` when there is none, it is empty, or it is an
    /// unexpanded Xcode variable (`$(…)`).
    private static func text(_ value: SettingValue?, key: String) throws -> String? {
        switch value {
        case .string(let text)?:
            let text = text.trimmingWhitespace()
            return text.isEmpty || text.hasPrefix("$(") ? nil : text
        case nil:
            return nil
        case let other?:
            throw EnvironmentError(
                .invalidSection, "'\(key)' is \(other.typeName.withArticle), expected a string", key: key,
                file: "embedded Info.plist")
        }
    }

    private static func names(_ values: [SettingValue], key: String) throws -> [String] {
        try values.map {
            guard case .string(let name) = $0 else {
                throw EnvironmentError(
                    .invalidSection, "'\(key)' must contain only strings, found \($0.typeName.withArticle)", key: key,
                    file: "embedded Info.plist")
            }
            return name
        }
    }
}
