/// Where an effective value came from: which layer, and which file if any.
///
/// Layers apply lowest first: ``Layer/defaults``; then, file by file (the documents of each
/// ``ConfigurationSource`` such as etcd's, the main file, then each drop-in), ``Layer/common``,
/// ``Layer/environment`` and ``Layer/instance``; then ``Layer/environmentVariable``; and last
/// ``Layer/override``.
public struct ValueSource: Sendable, Hashable {
    /// A layer of the configuration.
    public enum Layer: String, Sendable, Hashable, CaseIterable {
        /// Compiled-in defaults: the declared settings' defaults.
        case defaults
        /// A file's `Common` dictionary, inherited by every environment.
        case common
        /// A file's dictionary for the selected environment.
        case environment
        /// A file's `Instances` entry for the selected instance, above that file's environment
        /// section.
        case instance
        /// An environment variable with ``EnvironmentOptions/variablePrefix``
        /// (`APP_Database__Port`); ``ValueSource/section`` names it.
        case environmentVariable
        /// A runtime override set through ``Environment/setOverride(_:forKey:)``; not persisted.
        case override
    }

    /// The layer that set the value.
    public var layer: Layer
    /// The file that set the value, or `nil` for defaults, overrides and in-memory configuration.
    public var file: String?
    /// The section of the file that set the value: `Common`, the environment's name, or
    /// `Instances.NAME`; for ``Layer/environmentVariable``, the variable's name.
    public var section: String?

    /// Creates a source.
    package init(layer: Layer, file: String? = nil, section: String? = nil) {
        self.layer = layer
        self.file = file
        self.section = section
    }

    /// The compiled-in defaults.
    package static let defaults = ValueSource(layer: .defaults)
    /// A runtime override.
    package static let override = ValueSource(layer: .override)
}

extension ValueSource: CustomStringConvertible {
    /// For example `/etc/app/Environments.plist [Production]`, `$APP_Database__Port` or
    /// `defaults`.
    public var description: String {
        switch layer {
        case .defaults: return "defaults"
        case .override: return "override"
        case .environmentVariable: return "$\(section ?? "?")"
        case .common, .environment, .instance:
            let section = section ?? (layer == .common ? "Common" : layer.rawValue)
            return "\(file ?? "built-in") [\(section)]"
        }
    }
}

/// An effective value with its provenance and secrecy.
public struct ConfiguredValue: Sendable, Hashable {
    /// The value after layering and interpolation.
    public var value: SettingValue
    /// The layer and file that set it.
    public var source: ValueSource
    /// Whether the value is secret: listed in `Secrets`, below a secret key, or interpolated
    /// from a credential or another secret. Secret values are redacted in descriptions.
    public var isSecret: Bool

    /// Creates a configured value.
    package init(value: SettingValue, source: ValueSource, isSecret: Bool = false) {
        self.value = value
        self.source = source
        self.isSecret = isSecret
    }

    /// The text shown for the value in logs and listings: the value, or `<redacted>` if it is
    /// secret and `revealSecrets` is false.
    public func displayValue(revealSecrets: Bool = false) -> String {
        isSecret && !revealSecrets ? ConfiguredValue.redacted : value.description
    }

    /// The placeholder shown instead of a secret value.
    package static let redacted = "<redacted>"
}

extension ConfiguredValue: CustomStringConvertible {
    /// The value as ``displayValue(revealSecrets:)`` shows it, and its source, for example
    /// `<redacted> (/etc/app/Environments.plist [Production])`: a configured value that ends up
    /// in a log message or an error does not reveal a secret.
    public var description: String { "\(displayValue()) (\(source))" }
}
