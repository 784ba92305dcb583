#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension EnvironmentError {
    /// An error that rejects the value of one key, for ``EnvironmentOptions/validate``: it names
    /// the key, the value as ``ConfiguredValue/displayValue(revealSecrets:)`` shows it (so a
    /// secret value reads `<redacted>`), the reason, the environment and the file that set the
    /// value.
    ///
    /// ```swift
    /// options.validate = { snapshot in
    ///     let port = snapshot.get("ListenPort", default: 8080)
    ///     guard (1...65535).contains(port) else {
    ///         throw EnvironmentError.rejected(key: "ListenPort", in: snapshot, reason: "must be between 1 and 65535")
    ///     }
    /// }
    /// ```
    ///
    /// reads `/etc/app/Environments.plist: 'ListenPort' is 70000: must be between 1 and 65535
    /// (environment 'Production')`, and for a secret `'Database.Password' is <redacted>: ...`.
    ///
    /// - Parameters:
    ///   - key: The key path, relative to `configuration` when it is a scoped view.
    ///   - configuration: The configuration being judged: the snapshot `validate` is given,
    ///     or a view of it.
    ///   - reason: Why the value is rejected, without the value itself.
    ///   - hint: What to do about it, if there is more to say than the reason.
    /// - Returns: An error with code ``Code/validationFailed``.
    public static func rejected(
        key: String, in configuration: some ConfigurationReading, reason: String, hint: String? = nil
    ) -> EnvironmentError {
        let path = configuration.fullKeyPath(key)
        let configured = configuration.configuredValue(forKey: key)
        let what = configured.map { "is \($0.displayValue())" } ?? "has no value"
        return EnvironmentError(
            .validationFailed, "'\(path)' \(what): \(reason)", key: path,
            environment: configuration.snapshot.environmentName, file: configured?.source.file, hint: hint)
    }
}

extension EnvironmentSnapshot {
    /// Secret values shorter than this many characters are not looked for in free text by
    /// ``redactingSecrets(in:)-(String)``: so short a text turns up by chance in numbers and words.
    static let shortestRedactedText = 4

    /// The texts of every secret value, longest first: strings, numbers and booleans as their
    /// descriptions, and the elements of arrays and dictionaries that are secret.
    var secretTexts: [String] {
        var texts: Set<String> = []
        func collect(_ value: SettingValue) {
            switch value {
            case .array(let elements): elements.forEach(collect)
            case .dictionary(let members): members.values.forEach(collect)
            case .string(let text): texts.insert(text)
            default: texts.insert(value.description)
            }
        }
        for key in leafKeys {
            guard let entry = table[key], entry.isSecret else { continue }
            collect(entry.value)
        }
        // The new values of restart-only keys, which the snapshot holds beside its own.
        for pending in pendingRestart.values where pending.isSecret { collect(pending.value) }
        return texts.filter { $0.count >= Self.shortestRedactedText }.sorted { $0.count > $1.count }
    }

    /// `text` with every secret value in it (of at least ``shortestRedactedText`` characters)
    /// replaced by `<redacted>`: for messages the library did not write, such as an
    /// application's own `validate` errors or a `Decodable` type's, which may quote a value.
    func redactingSecrets(in text: String) -> String {
        var text = text
        for secret in secretTexts where text.contains(secret) {
            text = text.replacingEvery(secret, with: ConfiguredValue.redacted)
        }
        return text
    }

    /// `error` with every secret value in its message and hint replaced by `<redacted>`.
    func redactingSecrets(in error: EnvironmentError) -> EnvironmentError {
        var error = error
        error.message = redactingSecrets(in: error.message)
        error.hint = error.hint.map(redactingSecrets(in:))
        return error
    }

    /// Why a `Decodable` type refused the value at or below `key`, without a secret value:
    /// Swift's own messages quote the value (`Cannot initialize Level from invalid String
    /// value ...`), so for a secret one only the key path is given.
    func describeDecodingFailure(_ error: any Error, below key: String?) -> String {
        if let decoding = error as? DecodingError {
            let context: DecodingError.Context?
            switch decoding {
            case .dataCorrupted(let found), .typeMismatch(_, let found), .valueNotFound(_, let found),
                .keyNotFound(_, let found):
                context = found
            @unknown default:
                context = nil
            }
            if let context {
                let parts =
                    (key.map { [$0] } ?? [])
                    + context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? SettingPath.quoted($0.stringValue) }
                let path = SettingValueDecoder.describe(parts)
                if holdsSecret(path) {
                    return "the secret value of '\(path)' was refused (details withheld: they would show it)"
                }
            }
        }
        return redactingSecrets(in: "\(error)")
    }

    /// Whether the value at `path` (an array element's key path included) is secret: the
    /// nearest key that has an entry decides.
    private func holdsSecret(_ path: String) -> Bool {
        var candidate = Substring(path.prefix { $0 != "[" })
        while true {
            if let entry = table[String(candidate)] { return entry.isSecret }
            guard let dot = SettingPath.parentEnd(of: candidate) else { return false }
            candidate = candidate[..<dot]
        }
    }
}
