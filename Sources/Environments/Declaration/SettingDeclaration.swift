#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The type a declared setting holds, in the words a configuration file uses.
///
/// Values are checked with the same conversions as the typed reads: an integer setting
/// accepts `<integer>`, an integral `<real>` and a decimal `<string>` (which is what an
/// environment variable or `${env:PORT}` gives).
package indirect enum SettingType: Sendable, Hashable, CustomStringConvertible {
    /// A string; numbers and booleans as text.
    case string
    /// An integer.
    case integer
    /// A real number.
    case real
    /// A boolean (`true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0` as strings).
    case boolean
    /// A URL: a string with a scheme.
    case url
    /// A duration: a number of seconds, or a string with systemd's time units (`500ms`).
    case duration
    /// A date (`<date>` or an ISO 8601 string).
    case date
    /// Data (`<data>`).
    case data
    /// An array whose every element has the given type.
    case array(SettingType)
    /// A dictionary with free keys (`Upstreams`), whose every value has the given type.
    case map(SettingType)
    /// A dictionary whose keys are not declared one by one (a section decoded into a
    /// `Decodable` type, say): anything below it is covered.
    case section
    /// Any value.
    case any
    /// A type of the application's own, named by its Swift name; its values are checked by
    /// its `SettingValueConvertible` conversion (``Setting`` declares it).
    case custom(String)

    /// The type's name in messages: `integer`, `array of URL`, `map of duration`.
    package var description: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .boolean: "boolean"
        case .url: "URL"
        case .duration: "duration"
        case .date: "date"
        case .data: "data"
        case .array(let element): "array of \(element)"
        case .map(let value): "map of \(value)"
        case .section: "dictionary"
        case .any: "value"
        case .custom(let name): name
        }
    }

    /// The type a Swift type is read as: the library's own types by their word, others as
    /// ``custom(_:)``.
    package static func of<T>(_ type: T.Type) -> SettingType {
        (type as? any BuiltInSettingType.Type)?.settingType ?? .custom(String(describing: type))
    }
}

/// Where a declared setting must be set: by a file, an environment variable or an override,
/// not only by a default.
public struct SettingRequirement: Sendable, Hashable {
    /// The environments it is required in; `nil` for every environment.
    package let environments: Set<String>?
    /// Whether it is required at all.
    package let isRequired: Bool

    private init(isRequired: Bool, environments: Set<String>?) {
        self.isRequired = isRequired
        self.environments = environments
    }

    /// Not required: a missing value reads as the default.
    public static let optional = SettingRequirement(isRequired: false, environments: nil)
    /// Required in every environment.
    public static let always = SettingRequirement(isRequired: true, environments: nil)
    /// Required in the named environments only (`.in("Production")`).
    public static func `in`(_ environments: String...) -> SettingRequirement {
        SettingRequirement(isRequired: true, environments: Set(environments))
    }
    /// Required in the given environments only.
    package static func `in`(_ environments: Set<String>) -> SettingRequirement {
        SettingRequirement(isRequired: true, environments: environments)
    }

    /// Whether the setting is required in the environment `name`.
    package func applies(in name: String) -> Bool {
        isRequired && (environments?.contains(name) ?? true)
    }
}

/// What values a declared setting accepts beyond its type. For an array or a map, each
/// element is checked.
///
/// Make one with a factory (`.range(1...65535)`, `.oneOf("debug", "info")`,
/// `.pattern("[a-z]+")`, `.schemes("http", "https")`).
public struct SettingBounds: Sendable, Hashable {
    /// The smallest number accepted (durations in seconds), if any.
    package var minimum: Double?
    /// The largest number accepted (durations in seconds), if any.
    package var maximum: Double?
    /// The range as written, for messages (`1...65535`).
    package var rangeDescription: String?
    /// The only values accepted, if not empty; compared after conversion to the setting's
    /// type (so `"8080"` equals `8080` for an integer).
    package var allowedValues: [SettingValue]
    /// A regular expression a string must match whole, in the syntax of Swift's `Regex` (the
    /// Perl- and ICU-style syntax most tools share), matched on Unicode scalars as ICU does:
    /// `.` matches one scalar. A pattern `Regex` cannot read makes every value fail the check,
    /// with an error that says so.
    package var pattern: String?
    /// The schemes a URL may have (compared ignoring case), if not empty.
    package var urlSchemes: [String]

    /// Creates bounds that combine several kinds; every part is optional.
    package init(
        minimum: Double? = nil, maximum: Double? = nil, rangeDescription: String? = nil,
        allowedValues: [SettingValue] = [], pattern: String? = nil, urlSchemes: [String] = []
    ) {
        self.minimum = minimum
        self.maximum = maximum
        self.rangeDescription = rangeDescription
        self.allowedValues = allowedValues
        self.pattern = pattern
        self.urlSchemes = urlSchemes
    }

    /// No bounds.
    public static let none = SettingBounds()

    /// Integers in a range.
    public static func range(_ range: ClosedRange<Int>) -> SettingBounds {
        SettingBounds(
            minimum: Double(range.lowerBound), maximum: Double(range.upperBound), rangeDescription: "\(range)")
    }
    /// Integers from a lower bound.
    public static func range(_ range: PartialRangeFrom<Int>) -> SettingBounds {
        SettingBounds(minimum: Double(range.lowerBound), rangeDescription: "at least \(range.lowerBound)")
    }
    /// Real numbers in a range.
    public static func range(_ range: ClosedRange<Double>) -> SettingBounds {
        SettingBounds(minimum: range.lowerBound, maximum: range.upperBound, rangeDescription: "\(range)")
    }
    /// Durations in a range.
    public static func range(_ range: ClosedRange<Duration>) -> SettingBounds {
        SettingBounds(
            minimum: range.lowerBound.inSeconds, maximum: range.upperBound.inSeconds,
            rangeDescription: "\(DurationParser.text(range.lowerBound)) to \(DurationParser.text(range.upperBound))")
    }
    /// One of the given values.
    public static func oneOf(_ values: SettingValue...) -> SettingBounds {
        SettingBounds(allowedValues: values)
    }
    /// A string that matches a regular expression whole.
    public static func pattern(_ pattern: String) -> SettingBounds {
        SettingBounds(pattern: pattern)
    }
    /// A URL with one of the given schemes.
    public static func schemes(_ schemes: String...) -> SettingBounds {
        SettingBounds(urlSchemes: schemes)
    }
}

extension Duration {
    /// The duration in seconds, as a real number.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Something that declares one setting: a ``SettingDeclaration`` or a typed ``Setting``.
public protocol SettingDeclaring: Sendable {
    /// The setting's declaration.
    var declaration: SettingDeclaration { get }
}

/// One declared setting: its key, type, default, requirement, bounds, secrecy, whether it
/// takes a restart, a one-line summary and its former names.
///
/// A program declares a typed ``Setting``, which reads the value too; this is the part every
/// setting shares. See <doc:DeclaringYourSettings>.
public struct SettingDeclaration: Sendable, SettingDeclaring {
    /// The key path, in ``SettingPath``'s text form (`Database.Port`).
    public let key: String
    /// The key path's components, parsed once here rather than at every load.
    package let components: [String]
    /// The type of value it holds.
    package var type: SettingType
    /// The default, which joins the defaults layer (below every file), if any.
    package var defaultValue: SettingValue?
    /// Where it must be set.
    package var requirement: SettingRequirement
    /// What values it accepts beyond its type.
    package var bounds: SettingBounds
    /// Whether its value is secret, as if listed in `Secrets`.
    package var isSecret: Bool
    /// Whether a change takes a restart, as if listed in `RestartRequired`.
    package var isRestartOnly: Bool
    /// What it is for, in one line.
    package var summary: String
    /// Keys it had in earlier releases (``SettingPath`` text): still read, with a warning.
    package let formerNames: [String]
    /// An extra check of a value of a type of the application's own.
    let accepts: (@Sendable (SettingValue) -> Bool)?

    /// Itself.
    public var declaration: SettingDeclaration { self }

    /// A string without bounds: any string value is valid, with nothing to check.
    var isPlainString: Bool {
        if case .string = type, bounds == .none, accepts == nil { return true }
        return false
    }

    /// Declares a setting.
    ///
    /// - Parameters:
    ///   - key: The key path (`Database.Port`, `Upstreams."api.example.com"`). It must be a
    ///     valid ``SettingPath``: a program with an invalid one stops here (a programming
    ///     error, like an invalid literal).
    ///   - type: The type of value it holds.
    ///   - defaultValue: The default, joining the defaults layer.
    ///   - required: Where it must be set by a file, a variable or an override.
    ///   - bounds: What values it accepts beyond its type.
    ///   - secret: Whether its value is secret.
    ///   - restartOnly: Whether a change takes a restart.
    ///   - summary: What it is for, in one line.
    ///   - formerNames: Keys it had in earlier releases.
    package init(
        _ key: String, type: SettingType, default defaultValue: SettingValue? = nil,
        required: SettingRequirement = .optional, bounds: SettingBounds = .none, secret: Bool = false,
        restartOnly: Bool = false, summary: String = "", formerNames: [String] = []
    ) {
        self.init(
            key, type: type, default: defaultValue, required: required, bounds: bounds, secret: secret,
            restartOnly: restartOnly, summary: summary, formerNames: formerNames, accepts: nil)
    }

    init(
        _ key: String, type: SettingType, default defaultValue: SettingValue?, required: SettingRequirement,
        bounds: SettingBounds, secret: Bool, restartOnly: Bool, summary: String, formerNames: [String],
        accepts: (@Sendable (SettingValue) -> Bool)?
    ) {
        let path = Self.path(key)
        self.key = path.description
        self.components = path.components
        self.type = type
        self.defaultValue = defaultValue
        self.requirement = required
        self.bounds = bounds
        self.isSecret = secret
        self.isRestartOnly = restartOnly
        self.summary = summary
        self.formerNames = formerNames.map(Self.canonical)
        self.accepts = accepts
    }

    private static func path(_ key: String) -> SettingPath {
        do {
            return try SettingPath(parsing: key)
        } catch {
            preconditionFailure("invalid key in a setting declaration: \(error)")
        }
    }

    private static func canonical(_ key: String) -> String {
        path(key).description
    }
}
