import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A declared setting that is read by its declaration, so that its key and its type are
/// written once in a program.
///
/// ```swift
/// enum Settings {
///     static let listenPort = Setting<Int>(
///         "ListenPort", default: 8080, bounds: .range(1...65535), restartOnly: true,
///         summary: "The TCP port the daemon listens on")
///     static let password = Setting<String?>(
///         "Database.Password", required: .in("Production"), secret: true, summary: "The database password")
/// }
///
/// options.declaration = SettingsDeclaration([Settings.listenPort, Settings.password])
/// let port = Environment.shared[Settings.listenPort]      // Int
/// let password = Environment.shared[Settings.password]    // String?
/// ```
///
/// A read costs what ``ConfigurationReading/get(_:as:default:)`` costs: one lookup and one
/// conversion.
public struct Setting<Value: Sendable>: Sendable, SettingDeclaring {
    /// Everything a setting holds, by reference: a `Setting` is passed (and may be copied) at
    /// every read, and a copy then retains one reference rather than each field.
    @usableFromInline let storage: SettingStorage<Value>

    /// The declaration: key, type, bounds and the rest.
    public var declaration: SettingDeclaration { storage.declaration }
    /// What a read gives when the key has no value (or, in a configuration that was not
    /// checked against the declaration, a value of another type).
    public var defaultValue: Value { storage.defaultValue }
    /// The key path, in ``SettingPath``'s text form (the declaration's key).
    public var key: String { storage.key }

    /// Declares a setting with a default.
    ///
    /// A default of the library's value types (strings, numbers, booleans, URLs, durations,
    /// dates, data, and arrays and dictionaries of them) joins the defaults layer, so
    /// ``ConfigurationReading/fetch(_:)``, `${...}` and listings see it too; one of a type of
    /// your own is only what a read of this setting falls back to.
    ///
    /// - Parameters:
    ///   - key: The key path (`Database.Port`); it must be a valid ``SettingPath``.
    ///   - defaultValue: The value when no layer sets one.
    ///   - required: Where it must be set by a file, a variable or an override.
    ///   - bounds: What values it accepts beyond its type.
    ///   - secret: Whether its value is secret.
    ///   - restartOnly: Whether a change takes a restart.
    ///   - summary: What it is for, in one line.
    ///   - formerNames: Keys it had in earlier releases.
    @inlinable
    public init(
        _ key: String, default defaultValue: Value, required: SettingRequirement = .optional,
        bounds: SettingBounds = .none, secret: Bool = false, restartOnly: Bool = false, summary: String = "",
        formerNames: [String] = []
    ) where Value: SettingValueConvertible {
        // The conversion is made here, inlined into the program's declaration, so that it is
        // specialized for `Value`: a read then converts without generic dispatch.
        self.init(
            key, default: defaultValue, convert: { Value(settingValue: $0) },
            declaration: Self.declaration(
                key, Value.self, default: defaultValue,
                required: required, bounds: bounds, secret: secret, restartOnly: restartOnly, summary: summary,
                formerNames: formerNames))
    }

    /// Declares a setting without a default: a read gives `nil` when no layer sets it.
    ///
    /// - Parameters:
    ///   - key: The key path (`Database.Password`); it must be a valid ``SettingPath``.
    ///   - required: Where it must be set by a file, a variable or an override.
    ///   - bounds: What values it accepts beyond its type.
    ///   - secret: Whether its value is secret.
    ///   - restartOnly: Whether a change takes a restart.
    ///   - summary: What it is for, in one line.
    ///   - formerNames: Keys it had in earlier releases.
    @inlinable
    public init<Wrapped: SettingValueConvertible>(
        _ key: String, required: SettingRequirement = .optional, bounds: SettingBounds = .none,
        secret: Bool = false, restartOnly: Bool = false, summary: String = "", formerNames: [String] = []
    ) where Value == Wrapped? {
        self.init(
            key, default: nil, convert: { Wrapped(settingValue: $0).map { .some($0) } },
            declaration: Self.declaration(
                key, Wrapped.self, default: nil, required: required, bounds: bounds, secret: secret,
                restartOnly: restartOnly, summary: summary, formerNames: formerNames))
    }

    @usableFromInline
    init(
        _ key: String, default defaultValue: Value, convert: @escaping @Sendable (SettingValue) -> Value?,
        declaration: SettingDeclaration
    ) {
        self.storage = SettingStorage(
            key: declaration.key, defaultValue: defaultValue, convert: convert, declaration: declaration)
    }

    /// The declaration of a setting whose values convert to `T`.
    @usableFromInline
    static func declaration<T: SettingValueConvertible>(
        _ key: String, _: T.Type, default defaultValue: T?, required: SettingRequirement,
        bounds: SettingBounds, secret: Bool, restartOnly: Bool, summary: String, formerNames: [String]
    ) -> SettingDeclaration {
        let type = SettingType.of(T.self)
        return SettingDeclaration(
            key, type: type, default: (defaultValue as? any BuiltInSettingType)?.settingValue ?? nil,
            required: required, bounds: bounds, secret: secret,
            restartOnly: restartOnly, summary: summary, formerNames: formerNames,
            accepts: Self.accepts(T.self, type: type))
    }

    /// For a type of the application's own, its conversion checks values.
    private static func accepts<T: SettingValueConvertible>(_: T.Type, type: SettingType) -> (
        @Sendable (SettingValue) -> Bool
    )? {
        if case .custom = type { return { T(settingValue: $0) != nil } }
        if case .array(.custom) = type { return { T(settingValue: $0) != nil } }
        if case .map(.custom) = type { return { T(settingValue: $0) != nil } }
        return nil
    }

    /// The value in `reader`, else ``defaultValue``: what `reader[setting]` reads.
    ///
    /// A configuration loaded with a ``SettingsDeclaration`` that holds this setting has
    /// been checked: its value converts. Elsewhere (an in-memory environment, a reader
    /// without the declaration) a value of another type is logged as a warning and the
    /// default is used, as ``ConfigurationReading/get(_:as:default:)`` does.
    @inlinable
    func read(from reader: some ConfigurationReading) -> Value {
        // Inlinable, so that a program's read is specialized for its reader and its type: one
        // lookup and one conversion.
        let storage = self.storage
        guard let value = reader.value(forKey: storage.key) else { return storage.defaultValue }
        if let converted = storage.convert(value) { return converted }
        return wrongType(in: reader)
    }

    /// The default, with a warning: the value has another type.
    @usableFromInline
    func wrongType(in reader: some ConfigurationReading) -> Value {
        reader.snapshot.logger.warning(
            "using the default for a value of the wrong type",
            metadata: ["key": "\(declaration.key)", "expected": "\(declaration.type)"])
        return defaultValue
    }
}

/// What a ``Setting`` holds.
@usableFromInline
final class SettingStorage<Value: Sendable>: Sendable {
    /// The key path, in ``SettingPath``'s text form (the declaration's, kept apart so that a
    /// read touches this one field).
    @usableFromInline let key: String
    @usableFromInline let defaultValue: Value
    /// The conversion of a value to `Value`, specialized where the setting is declared.
    @usableFromInline let convert: @Sendable (SettingValue) -> Value?
    let declaration: SettingDeclaration

    init(
        key: String, defaultValue: Value, convert: @escaping @Sendable (SettingValue) -> Value?,
        declaration: SettingDeclaration
    ) {
        self.key = key
        self.defaultValue = defaultValue
        self.convert = convert
        self.declaration = declaration
    }
}

extension ConfigurationReading {
    /// The value of a declared setting, else its default.
    ///
    /// A configuration loaded with a ``SettingsDeclaration`` that holds the setting has been
    /// checked: its value converts. Elsewhere (an in-memory environment, a reader without the
    /// declaration) a value of another type is logged as a warning and the default is used, as
    /// ``ConfigurationReading/get(_:as:default:)`` does.
    @inlinable
    public subscript<Value>(setting: Setting<Value>) -> Value {
        setting.read(from: self)
    }
}
