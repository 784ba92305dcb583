import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

extension DropInEditor {
    /// What a change did, for the lines that confirm it.
    package struct Outcome {
        /// The drop-in as it was (`nil`: there was none).
        package var old: Data?
        /// What was checked, for a confirmation line: `checked for Debug, Release; checked by
        /// the running daemon (environment Release)`.
        package var checked: String
        /// The notes to give once it is installed (``verdict(_:allowShadowed:)``).
        package var notes: [String]
        /// The keys changed.
        package var changes: [ChangedKey]
    }

    /// Writes `value` at the key path `components` (`key` as given, for messages) into
    /// `section` of the drop-in, checked as ``check(_:)`` and ``verdict(_:allowShadowed:)``
    /// say, and installs it (``update(_:)``).
    package func set(_ key: String, components: [String], to value: Any, in section: String, allowShadowed: Bool)
        throws -> Outcome
    {
        try update { old in
            // A key path through a value that is not a dictionary where the files set it now.
            for snapshot in try currentSnapshots() {
                for end in 1..<components.count {
                    let prefix = try SettingPath(components: Array(components[..<end])).description
                    guard let found = snapshot.configuredValue(forKey: prefix) else { continue }
                    if case .dictionary = found.value { continue }
                    let article = "aeiou".contains(found.value.typeName.prefix(1)) ? "an" : "a"
                    throw Failure(
                        .invalidKey,
                        "'\(prefix)' is \(article) \(found.value.typeName) (set by \(found.source)), not a dictionary: '\(key)' cannot go through it",
                        key: key)
                }
            }
            var root = try DropInDocument.root(old, path: path)
            let sectionValue = root[section] ?? [String: Any]()
            guard let dictionary = sectionValue as? [String: Any] else {
                throw Failure(
                    .malformedFile,
                    "'\(section)' in \(path) is \(DropInDocument.typeName(sectionValue)), not a dictionary", file: path)
            }
            root[section] = try DropInDocument.setting(value, at: components[...], in: dictionary, trail: "")
            let new = try DropInDocument.data(root)
            let checked = try check(new)
            let changes = [ChangedKey(section: section, components: components, kind: .written)]
            var notes = try verdict(effect(of: changes, writing: new, lines: old), allowShadowed: allowShadowed)
            if old == nil, let note = formerDefaultNote { notes.insert(note, at: 0) }
            return (new, Outcome(old: old, checked: checked, notes: notes, changes: changes))
        }
    }

    /// Removes each of `keys` from `section` of the drop-in, checked and installed as
    /// ``set(_:components:to:in:allowShadowed:)``. A key the drop-in does not set is an error.
    ///
    /// - Parameter hint: Said after an error that the drop-in or a key is not there.
    package func unset(_ keys: [String], in section: String, allowShadowed: Bool, hint: String = "") throws
        -> Outcome
    {
        try update { old in
            guard old != nil else {
                throw Failure(.keyNotSet, "\(path) does not exist; nothing to unset\(hint)", file: path)
            }
            var root = try DropInDocument.root(old, path: path)
            guard var dictionary = root[section] as? [String: Any] else {
                throw Failure(.keyNotSet, "\(path) has no '\(section)' dictionary; nothing to unset\(hint)", file: path)
            }
            var changes: [ChangedKey] = []
            for key in keys {
                let components = try DropInDocument.components(key)
                guard DropInDocument.contains(components[...], in: dictionary) else {
                    throw Failure(
                        .keyNotSet, "\(path) does not set \(section).\(key); nothing was changed\(hint)", key: key,
                        file: path)
                }
                dictionary = try DropInDocument.setting(nil, at: components[...], in: dictionary, trail: "")
                changes.append(ChangedKey(section: section, components: components, kind: .removed))
            }
            root[section] = dictionary.isEmpty ? nil : dictionary
            let new = try DropInDocument.data(root)
            let checked = try check(new)
            let notes = try verdict(effect(of: changes, writing: new, lines: old), allowShadowed: allowShadowed)
            return (new, Outcome(old: old, checked: checked, notes: notes, changes: changes))
        }
    }

    /// Installs `edited` as the drop-in, in place of `original` (what it held when the edit
    /// began; `nil`: none), holding the directory's lock: checked as ``check(_:)``, every key
    /// it writes or removes must take effect (unless `allowShadowed`), and every key it writes
    /// must be one `declaration` covers (when given).
    ///
    /// - Returns: The outcome, or the failure of the check: an invalid result, which the
    ///   editor may correct (`edit` opens it again); nothing was installed.
    /// - Throws: ``DropInFile/Changed`` when the drop-in no longer holds `original`;
    ///   ``DaemonChanged`` when the daemon is not what it was; a ``Failure`` when the drop-in
    ///   cannot be read or replaced. Nothing was installed.
    package func install(
        _ edited: Data, over original: Data?, allowShadowed: Bool, declaration: KnownDeclaration?,
        override: String
    ) throws -> Result<Outcome, Failure> {
        try file.withLock {
            guard try current() == original else { throw DropInFile.Changed() }
            let checked: String
            var notes: [String]
            let changes: [ChangedKey]
            do {
                checked = try check(edited)
                // What the edit changed, key by key, and whether it takes effect.
                changes = ChangedKey.differences(
                    old: try DropInDocument.root(original, path: path),
                    new: try DropInDocument.root(edited, path: path))
                if let refusal = declaration?.refusal(of: changes, verb: "write", override: override) {
                    throw refusal
                }
                notes = try verdict(effect(of: changes, writing: edited), allowShadowed: allowShadowed)
            } catch let failure as Failure {
                return .failure(failure)
            }
            if original == nil, let note = formerDefaultNote { notes.insert(note, at: 0) }
            try file.replace(expecting: original, with: edited)
            return .success(Outcome(old: original, checked: checked, notes: notes, changes: changes))
        }
    }
}
