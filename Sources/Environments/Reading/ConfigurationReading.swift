import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Read access to configuration, shared by ``Environment`` and ``EnvironmentSnapshot``.
///
/// Components that need configuration can take a `some ConfigurationReading` instead of
/// reaching for ``Environment/shared``, so tests can hand them an in-memory
/// ``Environment/init(values:environmentName:secretKeys:)``.
///
/// Every read in the extension goes through the two requirements, so a reader held as
/// `some ConfigurationReading` behaves exactly as the concrete type does.
///
/// One read for each need, and one rule for failures: a read with a default
/// (``get(_:as:default:)``, a declared ``Setting``) never throws, and logs a value of another
/// type; a typed read without one (``require(_:as:)``, ``decode(_:from:)``) throws
/// ``EnvironmentError``; a raw read (``fetch(_:)``, ``value(forKey:)``,
/// ``configuredValue(forKey:)``) returns `nil` when there is no value.
/// <doc:ReadsAndReloads#Which-read-to-use-when> has the table.
public protocol ConfigurationReading: Sendable {
    /// The value at a key path (`APIBaseUrl`, `Database.Host`), or `nil` if there is none.
    func value(forKey key: String) -> SettingValue?
    /// The snapshot reads are answered from; for ``Environment`` the current one.
    var snapshot: EnvironmentSnapshot { get }
}

extension ConfigurationReading {
    /// The effective value at a key path, with its source and secrecy, from one snapshot (for
    /// ``Environment``, the current one). Its ``ConfiguredValue/displayValue(revealSecrets:)``
    /// is the value as logs and listings show it, `<redacted>` when it is secret.
    public func configuredValue(forKey key: String) -> ConfiguredValue? {
        let snapshot = self.snapshot
        return snapshot.entry(forKey: fullKeyPath(key)).map(snapshot.configuredValue)
    }

    /// The raw value at a key path, as the Objective-C original's `fetch:` returned it:
    /// `String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]` or `[String: Any]`.
    ///
    /// ```swift
    /// let baseURL = Environment.shared.fetch("APIBaseUrl") as? String
    /// ```
    public func fetch(_ key: String) -> Any? {
        guard let value = value(forKey: key) else { return nil }
        return value.movedIntoAny()
    }

    /// The value at a key path converted to `T`; `nil` when the key has no value.
    ///
    /// - Throws: ``EnvironmentError`` with code `typeMismatch` naming the key, the expected
    ///   and actual type and the source, when the value cannot be converted.
    func converted<T: SettingValueConvertible>(_ key: String, as type: T.Type) throws(EnvironmentError) -> T? {
        guard let value = value(forKey: key) else { return nil }
        if let converted = T(settingValue: value) { return converted }
        // The source only now, for the error: reads that succeed never copy it.
        let snapshot = self.snapshot
        let configured = configuredValue(forKey: key) ?? ConfiguredValue(value: value, source: .defaults)
        throw EnvironmentError.typeMismatch(
            fullKeyPath(key), configured, expected: SettingTypeName.of(T.self), environment: snapshot.environmentName)
    }

    /// The value at a key path converted to `T`, which must be there.
    ///
    /// ```swift
    /// let host: String = try environment.require("Database.Host")
    /// let port = try environment.require("Database.Port", as: Int.self)
    /// ```
    ///
    /// For a value that may be absent, read it with a default
    /// (``get(_:as:default:)``) or declare it as a `Setting<T?>`.
    ///
    /// - Throws: ``EnvironmentError`` with code `missingKey` (naming the key, the environment
    ///   and the files searched) or `typeMismatch`.
    public func require<T: SettingValueConvertible>(_ key: String, as type: T.Type = T.self) throws(EnvironmentError)
        -> T
    {
        guard let value = try converted(key, as: T.self) else {
            let snapshot = self.snapshot
            let key = fullKeyPath(key)
            var searched = snapshot.files
            if searched.isEmpty, let location = snapshot.location { searched = [location.mainFile] }
            throw EnvironmentError(
                .missingKey, "required key '\(key)' has no value", key: key, environment: snapshot.environmentName,
                searchedFiles: searched, hint: "Add '\(key)' to Common or to the '\(snapshot.environmentName)' section")
        }
        return value
    }

    /// The value at a key path converted to `T`, or `defaultValue` when there is none or it
    /// has another type (which is logged as a warning, through ``EnvironmentOptions/logger``).
    /// It never throws; ``require(_:as:)`` is the read that does.
    ///
    /// ```swift
    /// let port = environment.get("ListenPort", default: 8080)            // Int
    /// let timeout = environment.get("Timeout", default: Duration.seconds(5))
    /// let ratio = environment.get("Ratio", as: Double.self, default: 1)
    /// ```
    ///
    /// Numbers, booleans, URLs and durations convert as ``SettingValueConvertible`` says:
    /// `"8080"` reads as an integer, `500ms` as a duration.
    @inlinable
    public func get<T: SettingValueConvertible>(_ key: String, as type: T.Type = T.self, default defaultValue: T) -> T {
        // Inlinable, so that a program's read is specialized for its reader and its type: one
        // lookup and one conversion, as a declared `Setting` costs.
        guard let value = value(forKey: key) else { return defaultValue }
        if let converted = T(settingValue: value) { return converted }
        return wrongType(key, default: defaultValue)
    }

    /// `defaultValue`, with a warning through the snapshot's logger: the value at `key` has
    /// another type than `T`.
    @usableFromInline
    func wrongType<T: SettingValueConvertible>(_ key: String, default defaultValue: T) -> T {
        do {
            _ = try converted(key, as: T.self)
        } catch {
            snapshot.logger.warning(
                "using the default for a value of the wrong type", metadata: ["error": "\(error)"])
        }
        return defaultValue
    }

    /// Decodes the dictionary at a key path (or, with `nil`, the whole configuration) into a
    /// `Decodable` type. Values convert as the typed reads do, so `"8080"` decodes as an `Int`.
    ///
    /// - Throws: ``EnvironmentError`` with code `missingKey`, or `decodingFailed` naming the
    ///   full key path that failed.
    public func decode<T: Decodable>(_ type: T.Type, from key: String? = nil) throws(EnvironmentError) -> T {
        if let view = self as? ScopedConfiguration {
            // The view's dictionary, or a path in it, decoded by the reader it views: errors
            // then name full key paths.
            let path = view.absoluteKey(key ?? "")
            return try view.base.decode(type, from: path.isEmpty ? nil : path)
        }
        let snapshot = self.snapshot
        let root: SettingValue
        if let key {
            root = try require(key, as: SettingValue.self)
        } else {
            root = .dictionary(snapshot.values)
        }
        do {
            return try T(from: SettingValueDecoder(value: root, codingPath: [], prefix: key))
        } catch var error as EnvironmentError {
            // The decoder knows the key path; add the environment, the files and the source. A
            // type's own `init(from:)` may have thrown it quoting a value: no secret one.
            error = snapshot.redactingSecrets(in: error)
            error.environment = error.environment ?? snapshot.environmentName
            if error.code == .missingKey {
                error.searchedFiles = snapshot.files
            } else if error.file == nil, let path = error.key {
                // The value's own entry, or the array that holds it (`Endpoints[1].URL`).
                var candidate = Substring(path.prefix { $0 != "[" })
                while configuredValue(forKey: String(candidate)) == nil, let dot = SettingPath.parentEnd(of: candidate)
                {
                    candidate = candidate[..<dot]
                }
                if let source = configuredValue(forKey: String(candidate))?.source {
                    error.file = source.file
                    error.message += "; set by \(source)"
                }
            }
            throw error
        } catch {
            throw EnvironmentError(
                .decodingFailed,
                "cannot decode \(T.self) from '\(key ?? "<root>")': \(snapshot.describeDecodingFailure(error, below: key))",
                key: key,
                environment: snapshot.environmentName, searchedFiles: snapshot.files)
        }
    }
}

extension EnvironmentError {
    /// The error for a value that cannot be read as `expected`: it names the key, the value's
    /// type (and the value, unless it is secret), the layer and file that set it, and what to do.
    /// Shared with the swift-configuration provider, so both report a mismatch the same way.
    package static func typeMismatch(
        _ key: String, _ configured: ConfiguredValue, expected: String, environment: String?
    ) -> EnvironmentError {
        let shown = configured.isSecret ? "" : " (\(configured.value.description))"
        return EnvironmentError(
            .typeMismatch,
            "'\(key)' is \(configured.value.typeName.withArticle)\(shown), expected \(expected); set by \(configured.source), layer \(configured.source.layer.rawValue)",
            key: key, environment: environment, file: configured.source.file,
            hint:
                "Change the value in \(configured.source.file ?? "its source") or read it as \(configured.value.typeName.withArticle)"
        )
    }
}
