import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

/// Renames settings written under a former name (a declaration's `formerNames`) to their name
/// now, in the main file and every drop-in: `envctl migrate`'s engine. The text of each file
/// is edited in place where that keeps it readable as the renamed dictionary (comments kept),
/// else the file is written anew; a section that sets both names, or a rename that would
/// change a value in effect, is refused with nothing written.
package enum FormerNameMigration {
    /// One rename in one file.
    package struct Rename {
        package var file: String
        package var line: Int?
        /// `Common.DatabaseHost -> Common.Database.Host`, or `Secrets: DatabaseHost -> Database.Host`.
        package var text: String
    }

    /// A file with its renames done.
    package struct Rewrite {
        package var file: String
        package var old: Data
        package var new: Data
        package var renames: [Rename]
        /// Whether the text was edited in place (comments kept) rather than written anew.
        package var keepsText: Bool
    }

    /// The main file and the drop-ins, in order.
    package static func configurationFiles(_ change: DropInEditor) -> [String] {
        let dropIns = PathNames.join(change.directory, change.fileName + ".d")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? [])
            .filter { ConfigurationLocation.isDropInFileName($0) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        return [change.mainFilePath] + names.map { PathNames.join(dropIns, $0) }
    }

    /// The file with its former names renamed, or `nil` when it has none.
    package static func rewrite(_ file: String, _ formerNames: [(former: String, key: String)], _ change: DropInEditor)
        throws
        -> Rewrite?
    {
        let dropInFile = change.file(at: file)
        let old: Data
        do {
            guard let state = try dropInFile.read() else { return nil }
            old = state.contents
        } catch let failure as Failure {
            // A file envctl cannot replace (a symbolic link) matters only if it has former names.
            guard let data = FileManager.default.contents(atPath: file) else { return nil }
            do {
                if try renamed(data, file: file, formerNames) == nil { return nil }
            } catch {}
            throw failure
        }
        guard let found = try renamed(old, file: file, formerNames) else { return nil }
        let (root, renames, edits) = found
        let structural = try DropInDocument.data(root)
        // The same renames in the text itself keep its comments and layout; used only if the
        // result reads back exactly as the rewritten dictionary.
        if let edits, old.first != UInt8(ascii: "b"), var text = String(data: old, encoding: .utf8) {
            var applied = true
            for edit in edits {
                guard let range = KeyLines.range(of: edit.anchors + [edit.element], in: text) else {
                    applied = false
                    break
                }
                text.replaceSubrange(range, with: edit.replacement)
            }
            let data = Data(text.utf8)
            if applied, let parsed = try? DropInDocument.root(data, path: file), ChangedKey.same(parsed, root) {
                return Rewrite(file: file, old: old, new: data, renames: renames, keepsText: true)
            }
        }
        return Rewrite(file: file, old: old, new: structural, renames: renames, keepsText: false)
    }

    /// How an operator takes a key out of `file`: a drop-in is envctl's to edit; the main file
    /// (a package's conffile, say) is edited by hand.
    package static func howToRemove(in file: String) -> String {
        let directory = PathNames.directory(of: file)
        guard directory.hasSuffix(".d") else { return "edit \(file) by hand" }
        // The file's name without its extension (`90-local.plist` gives `90-local`).
        let fileName = PathNames.lastComponent(of: file)
        let name =
            fileName.lastIndex(of: ".").map { $0 > fileName.startIndex ? String(fileName[..<$0]) : fileName }
            ?? fileName
        return "envctl unset KEY --drop-in \(name), or envctl edit --drop-in \(name)"
    }

    /// An edit of the text: the element found after the anchors (each after the one before),
    /// and what replaces it.
    struct TextEdit {
        var anchors: [String]
        var element: String
        var replacement: String
    }

    /// The root dictionary of `data` with its former names renamed, the renames, and the same
    /// as edits of the text (`nil` where one moves a value to another dictionary); `nil` when
    /// there is nothing to rename.
    static func renamed(_ data: Data, file: String, _ formerNames: [(former: String, key: String)]) throws -> (
        [String: Any], [Rename], [TextEdit]?
    )? {
        var renaming = Renaming(root: try DropInDocument.root(data, path: file), data: data, file: file)
        let sections = Self.sections(of: renaming.root)
        for (former, key) in formerNames {
            guard let formerPath = try? SettingPath(parsing: former).components,
                let keyPath = try? SettingPath(parsing: key).components
            else { continue }
            for (sectionPath, sectionName) in sections {
                try renaming.rename(formerPath, to: keyPath, in: sectionPath, named: sectionName)
            }
            // The lists of key paths: a former name there is renamed too (a secret stays secret).
            for list in ["Secrets", "RestartRequired"] {
                renaming.rename(former, to: key, inList: list)
            }
        }
        if !renaming.conflicts.isEmpty {
            throw Failure(renaming.conflicts.joined(separator: "; ") + "; nothing was written")
        }
        return renaming.renames.isEmpty ? nil : (renaming.root, renaming.renames, renaming.edits)
    }

    /// The sections of a drop-in's root where settings are, as (path in the root, name in
    /// messages): each environment's, and each instance's.
    private static func sections(of root: [String: Any]) -> [([String], String)] {
        var sections: [([String], String)] = []
        for name in root.keys.sorted() where !["Secrets", "RestartRequired"].contains(name) {
            guard let value = root[name] as? [String: Any] else { continue }
            if name == "Instances" {
                for instance in value.keys.sorted() where value[instance] is [String: Any] {
                    sections.append((["Instances", instance], "Instances.\(instance)"))
                }
            } else {
                sections.append(([name], name))
            }
        }
        return sections
    }

    /// The renames of one file as they are made: the root, what was renamed, the same as
    /// edits of the text (`nil` once one cannot be), and the conflicts found.
    private struct Renaming {
        var root: [String: Any]
        let data: Data
        let file: String
        var renames: [Rename] = []
        var edits: [TextEdit]? = []
        var conflicts: [String] = []

        init(root: [String: Any], data: Data, file: String) {
            self.root = root
            self.data = data
            self.file = file
        }

        /// Renames the former key path to the key's in one section, unless the key is set
        /// there too (a conflict, named with both lines).
        mutating func rename(
            _ formerPath: [String], to keyPath: [String], in sectionPath: [String], named sectionName: String
        )
            throws
        {
            guard var section = FormerNameMigration.value(at: sectionPath[...], in: root) as? [String: Any],
                let value = FormerNameMigration.value(at: formerPath[...], in: section)
            else { return }
            let former = formerPath.joined(separator: ".")
            let key = keyPath.joined(separator: ".")
            let formerLine = KeyLines.line(of: sectionPath + formerPath, in: data)
            if FormerNameMigration.value(at: keyPath[...], in: section) != nil {
                let keyLine = KeyLines.line(of: sectionPath + keyPath, in: data)
                conflicts.append(
                    "\(file)\(formerLine.map { ":\($0)" } ?? ""): \(sectionName).\(former) is the former name of \(key), and \(sectionName).\(key) is set too\(keyLine.map { " (line \($0))" } ?? ""): keep one of them (\(FormerNameMigration.howToRemove(in: file))) and run migrate again"
                )
                return
            }
            section = try DropInDocument.setting(nil, at: formerPath[...], in: section, trail: "")
            section = try DropInDocument.setting(value, at: keyPath[...], in: section, trail: "")
            root = try FormerNameMigration.setting(section, at: sectionPath, in: root)
            renames.append(
                Rename(file: file, line: formerLine, text: "\(sectionName).\(former) -> \(sectionName).\(key)"))
            if formerPath.count == keyPath.count, formerPath.dropLast() == keyPath.dropLast() {
                edits?.append(
                    TextEdit(
                        anchors: (sectionPath + formerPath.dropLast()).map(KeyLines.keyElement),
                        element: KeyLines.keyElement(formerPath.last ?? former),
                        replacement: KeyLines.keyElement(keyPath.last ?? key)))
            } else {
                edits = nil
            }
        }

        /// Renames the former name, and the paths below it, in a list of key paths (`Secrets`,
        /// `RestartRequired`).
        mutating func rename(_ former: String, to key: String, inList list: String) {
            guard var entries = root[list] as? [Any] else { return }
            var changed = false
            for (index, entry) in entries.enumerated() {
                guard let text = entry as? String else { continue }
                let canonical = (try? SettingPath(parsing: text).description) ?? text
                let renamedEntry: String
                if canonical == former {
                    renamedEntry = key
                } else if canonical.hasPrefix(former + ".") {
                    renamedEntry = key + String(canonical.dropFirst(former.count))
                } else {
                    continue
                }
                entries[index] = renamedEntry
                changed = true
                let whole = String(decoding: data, as: UTF8.self)
                let line = KeyLines.range(
                    of: [KeyLines.keyElement(list), KeyLines.stringElement(text)], in: whole
                ).map { KeyLines.line(at: $0.lowerBound, in: whole) }
                renames.append(Rename(file: file, line: line, text: "\(list): \(text) -> \(renamedEntry)"))
                edits?.append(
                    TextEdit(
                        anchors: [KeyLines.keyElement(list)], element: KeyLines.stringElement(text),
                        replacement: KeyLines.stringElement(renamedEntry)))
            }
            if changed { root[list] = entries }
        }
    }

    /// The value at a path of dictionaries.
    package static func value(at path: ArraySlice<String>, in dictionary: [String: Any]) -> Any? {
        guard let first = path.first, let value = dictionary[first] else { return nil }
        if path.count == 1 { return value }
        guard let child = value as? [String: Any] else { return nil }
        return Self.value(at: path.dropFirst(), in: child)
    }

    /// `root` with `section` at `path` (a section: one or two levels).
    static func setting(_ section: [String: Any], at path: [String], in root: [String: Any]) throws
        -> [String: Any]
    {
        var root = root
        if path.count == 1 {
            root[path[0]] = section
        } else {
            var parent = root[path[0]] as? [String: Any] ?? [:]
            parent[path[1]] = section
            root[path[0]] = parent
        }
        return root
    }

    /// Fails when the renames change a value in effect in some environment (a former name that
    /// is ignored today because its name now is set elsewhere, which renaming would bring in).
    package static func refuseValueChanges(_ change: DropInEditor, candidates: [String: Data]) throws {
        var base = try change.options()
        base.declaration = change.declaration
        var after = base
        after.candidateDocuments = candidates
        var changed: [String] = []
        for environment in try change.environmentNames(after) {
            var old = base
            old.environment = environment
            var new = after
            new.environment = environment
            guard let before = try? Environment(options: old).snapshot,
                let now = try? Environment(options: new).snapshot
            else { continue }
            // Values only: a Secrets entry renamed with its key makes a value secret that was
            // not, which is what renaming is for.
            let keys = Set(now.leafKeys).union(before.leafKeys).sorted().filter {
                now.value(forKey: $0) != before.value(forKey: $0)
            }
            if !keys.isEmpty { changed.append("\(environment): \(keys.joined(separator: ", "))") }
        }
        guard changed.isEmpty else {
            throw Failure(
                "renaming would change values in effect (\(changed.joined(separator: "; "))): a former name there is ignored today because its name now is set in another file or section; remove the former name by hand (envctl unset or edit) instead. Nothing was written"
            )
        }
    }
}
