package import Environments

/// A settings declaration that keys written are checked against, and where it came from: a
/// key it does not cover is a key nothing reads (a typo, most often), so a change that writes
/// one is refused where a declaration is known, as a shadowed one is.
package struct KnownDeclaration: Sendable {
    /// The declaration.
    package var declaration: SettingsDeclaration
    /// Where it came from, for messages: `the running daemon`, a schema file's path.
    package var source: String

    package init(_ declaration: SettingsDeclaration, source: String) {
        self.declaration = declaration
        self.source = source
    }

    /// The refusal of `key` (its `components`, in the section `section` when given), or `nil`
    /// when the declaration covers it: what is wrong, the declared key spelled nearly the same,
    /// and what to do.
    ///
    /// - Parameters:
    ///   - verb: What to do with the suggestion instead: `set`, `write`.
    ///   - override: How to write it all the same: `pass --allow-undeclared`.
    package func refusal(
        _ key: String, components: [String], section: String? = nil, verb: String, override: String
    ) -> Failure? {
        guard let miss = declaration.undeclared(components) else { return nil }
        var message =
            "'\(key)'\(section.map { " (in \($0))" } ?? "") is not a declared setting (declarations from \(source)), so nothing would read it"
        message += miss.suggestion.map { "; did you mean '\($0)'?" } ?? "."
        message +=
            " Nothing was written: "
            + (miss.suggestion.map { "\(verb) '\($0)' instead, or " } ?? "")
            + "\(override) to write it all the same"
        return Failure(.undeclaredKey, message, key: key)
    }

    /// The refusal of every key that `changes` write and the declaration does not cover, in
    /// one failure, or `nil` when it covers them all. Removing a key is never refused.
    package func refusal(of changes: [ChangedKey], verb: String, override: String) -> Failure? {
        let refusals = changes.filter { $0.kind == .written }.compactMap {
            refusal($0.key, components: $0.components, section: $0.section, verb: verb, override: override)
        }
        guard !refusals.isEmpty else { return nil }
        return Failure(.undeclaredKey, refusals.map(\.description).joined(separator: " "), key: refusals[0].key)
    }
}
