import Environments

#if canImport(FoundationEssentials)
    package import FoundationEssentials
#else
    package import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// One key that a change to a drop-in writes or removes, in one of its sections.
package struct ChangedKey: Hashable {
    package enum Kind: Hashable {
        /// Set (added, or given another value).
        case written
        /// Removed.
        case removed
    }

    /// `Common`, an environment's name, or `Instances.NAME`, as `ValueSource.section` names it.
    package var section: String
    /// The key path's components.
    package var components: [String]
    package var kind: Kind

    package init(section: String, components: [String], kind: Kind) {
        self.section = section
        self.components = components
        self.kind = kind
    }

    /// The key path as the configuration spells it (`SettingPath`).
    package var key: String {
        (try? SettingPath(components: components).description) ?? components.joined(separator: ".")
    }

    /// `Common.RequestTimeout`.
    package var label: String { "\(section).\(key)" }

    /// Whether the section applies to the configuration of `environment` and `instance`.
    package func applies(environment: String, instance: String?) -> Bool {
        section == "Common" || section == environment || (instance.map { section == "Instances.\($0)" } ?? false)
    }

    /// Every key that differs between two versions of a drop-in's root dictionary, by section:
    /// what `edit` changed. `Secrets` and `RestartRequired` are lists, not values, and are left out.
    package static func differences(old: [String: Any], new: [String: Any]) -> [ChangedKey] {
        var changes: [ChangedKey] = []
        for (section, oldSection, newSection) in sections(old).paired(with: sections(new)) {
            let before = leaves(oldSection ?? [:])
            let after = leaves(newSection ?? [:])
            for (path, value) in after where before[path].map({ !same($0, value) }) ?? true {
                changes.append(ChangedKey(section: section, components: path, kind: .written))
            }
            for path in before.keys where after[path] == nil {
                changes.append(ChangedKey(section: section, components: path, kind: .removed))
            }
        }
        return changes.sorted { ($0.section, $0.key) < ($1.section, $1.key) }
    }

    /// The sections of a root dictionary: `Common`, each environment's, `Instances.NAME`.
    private static func sections(_ root: [String: Any]) -> [String: [String: Any]] {
        var sections: [String: [String: Any]] = [:]
        for (name, value) in root where !["Secrets", "RestartRequired"].contains(name) {
            guard let dictionary = value as? [String: Any] else { continue }
            if name == "Instances" {
                for (instance, entries) in dictionary {
                    if let entries = entries as? [String: Any] { sections["Instances.\(instance)"] = entries }
                }
            } else {
                sections[name] = dictionary
            }
        }
        return sections
    }

    /// Every leaf (a value that is not a dictionary) by its path; an empty dictionary holds
    /// none, as it sets no value.
    package static func leaves(_ dictionary: [String: Any], prefix: [String] = []) -> [[String]: Any] {
        var result: [[String]: Any] = [:]
        for (key, value) in dictionary {
            if let child = value as? [String: Any] {
                result.merge(leaves(child, prefix: prefix + [key])) { _, new in new }
            } else {
                result[prefix + [key]] = value
            }
        }
        return result
    }

    /// Whether two property-list values are equal.
    package static func same(_ left: Any, _ right: Any) -> Bool {
        switch (left, right) {
        case (let left as String, let right as String): return left == right
        case (let left as Bool, let right as Bool): return left == right
        case (let left as Int, let right as Int): return left == right
        case (let left as Double, let right as Double): return left == right
        case (let left as Date, let right as Date): return left == right
        case (let left as Data, let right as Data): return left == right
        case (let left as [Any], let right as [Any]):
            return left.count == right.count && zip(left, right).allSatisfy { same($0, $1) }
        case (let left as [String: Any], let right as [String: Any]):
            return left.count == right.count
                && left.allSatisfy { key, value in right[key].map { same(value, $0) } ?? false }
        default: return false
        }
    }
}

extension Dictionary where Key == String, Value == [String: Any] {
    /// Pairs of this and `other`'s sections by name.
    fileprivate func paired(with other: [String: [String: Any]]) -> [(String, [String: Any]?, [String: Any]?)] {
        Set(keys).union(other.keys).sorted().map { ($0, self[$0], other[$0]) }
    }
}

/// What a change to a drop-in does to the values in effect, in every environment the files
/// define (and every instance they name): a key written that another source outweighs (a
/// later drop-in, the drop-in's own environment or instance section, an `APP_` variable, a
/// runtime override), a key removed that was in effect nowhere, and a `Common` value that
/// replaces values an environment or instance set for itself.
package struct ChangeEffect {
    /// One configuration the files give: an environment, with or without an instance.
    package struct Configuration: Hashable {
        package var environment: String
        package var instance: String?
    }

    /// Where one configuration takes a key's value from instead of the change.
    package struct Shadow {
        package var change: ChangedKey
        package var configuration: Configuration
        /// The value in effect and where it comes from, as `describe` puts it.
        package var winner: String
    }

    /// A value that an environment or instance set for itself, which a write to a wider
    /// section (`Common`) now replaces.
    package struct Replacement {
        package var change: ChangedKey
        package var configuration: Configuration
        /// The replaced value and where it came from.
        package var replaced: String
    }

    /// The environments compared, in order.
    package var environments: [String] = []
    /// The instances compared besides none, in order.
    package var instances: [String] = []
    /// Keys written that are not in effect somewhere.
    package var shadowed: [Shadow] = []
    /// Keys removed that were in effect nowhere, with what was in effect instead.
    package var removedWithoutEffect: [(change: ChangedKey, winners: [Shadow])] = []
    /// Environment- and instance-specific values that a write replaces.
    package var replacements: [Replacement] = []

    /// The sentences that say where the change has no effect, one per key.
    package func shadowReport(dropIn: String) -> [String] {
        var lines: [String] = []
        for (change, shadows) in Self.grouped(shadowed, by: \.change) {
            let parts = Self.grouped(shadows, by: \.winner).map { winner, shadows in
                "in \(phrase(shadows.map(\.configuration))), the value in effect is \(winner)"
            }
            lines.append("\(change.label) in \(dropIn) does not take effect: \(parts.joined(separator: "; "))")
        }
        for (change, winners) in removedWithoutEffect {
            let parts = Self.grouped(winners, by: \.winner).map { winner, shadows in
                "in \(phrase(shadows.map(\.configuration))), \(winner) outweighs it"
            }
            let detail = parts.isEmpty ? "" : ": \(parts.joined(separator: "; "))"
            lines.append(
                "removing \(change.label) from \(dropIn) changes no value in effect, since it was in effect in no environment\(detail)"
            )
        }
        return lines
    }

    /// The sentences that say which environment- or instance-specific values a write replaces.
    package func replacementReport(dropIn: String) -> [String] {
        Self.grouped(replacements, by: \.change).map { change, replacements in
            let parts = Self.grouped(replacements, by: \.replaced).map { replaced, replacements in
                "\(phrase(replacements.map(\.configuration))): \(replaced)"
            }
            return
                "\(change.label) in \(dropIn) also replaces what these set for themselves: \(parts.joined(separator: "; "))"
        }
    }

    /// `items` grouped by a key, groups and items in their first order.
    package static func grouped<Item, Key: Hashable>(_ items: [Item], by key: (Item) -> Key) -> [(Key, [Item])] {
        var groups: [Key: [Item]] = [:]
        var order: [Key] = []
        for item in items {
            let name = key(item)
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(item)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }

    /// Configurations in few words: `every environment (Debug, Staging), with or without an
    /// instance`, `instance eu-west (every environment)`, `Debug, Staging (also instance eu-west)`.
    package func phrase(_ configurations: [Configuration]) -> String {
        let given = Set(configurations)
        let all = Set(
            environments.flatMap { environment in
                ([nil] + instances.map { Optional($0) }).map { Configuration(environment: environment, instance: $0) }
            })
        if given == all {
            return "every environment (\(environments.joined(separator: ", ")))"
                + (instances.isEmpty ? "" : ", with or without an instance")
        }
        let named = { (environment: String) in
            instances.filter { given.contains(Configuration(environment: environment, instance: $0)) }
        }
        // The same instances in every environment, and none without one.
        if !environments.isEmpty, given.allSatisfy({ $0.instance != nil }),
            Set(environments.map { named($0) }).count == 1, let first = environments.first
        {
            return "instance \(named(first).joined(separator: ", ")) (every environment)"
        }
        return environments.compactMap { environment in
            let withNone = given.contains(Configuration(environment: environment, instance: nil))
            let withNamed = named(environment)
            switch (withNone, withNamed.isEmpty) {
            case (false, true): return nil
            case (true, true): return environment
            case (true, false):
                return withNamed.count == instances.count
                    ? "\(environment) (with or without an instance)"
                    : "\(environment) (also instance \(withNamed.joined(separator: ", ")))"
            case (false, false): return "\(environment) (instance \(withNamed.joined(separator: ", ")))"
            }
        }.joined(separator: ", ")
    }
}

extension DropInEditor {
    /// What writing `contents` as the drop-in does to `changes` in the values in effect, in
    /// every environment the files define, without and with each instance the files name; for
    /// the daemon's own environment, its `APP_` variables and runtime overrides count too (as
    /// its `Describe` reports the key's source).
    ///
    /// The configurations are built by the library, as `show` and `explain` build them: which
    /// source wins is its layering, not envctl's.
    ///
    /// - Parameter lines: The text whose lines messages give for this drop-in: its current
    ///   text for `set` and `unset` (what the operator sees, since nothing may be written),
    ///   the edited copy for `edit` (whose errors name the copy); `nil`: `contents`.
    package func effect(of changes: [ChangedKey], writing contents: Data, lines: Data? = nil) throws -> ChangeEffect {
        guard !changes.isEmpty else { return ChangeEffect() }
        var base = try options()
        if daemon != nil, let prefix = base.variablePrefix {
            // The daemon's variables are not this shell's: its own come from its answer below.
            base.processEnvironment = base.processEnvironment.filter { !$0.key.hasPrefix(prefix) }
        }
        var candidate = base
        candidate.candidateDocuments = [path: contents]
        let environments = try environmentNames(candidate)
        // The daemon's own variables and overrides: not in envctl's environment, but in its answer.
        let daemonSources = daemon?.outweighingSources() ?? [:]
        // Without an instance, and with each that the files name or that is selected.
        let named = Set(instanceNames(candidate) + (base.instance.map { [$0] } ?? [])).sorted()
        let instances: [String?] = [nil] + named.map { Optional($0) }
        var effect = ChangeEffect()
        effect.environments = environments
        effect.instances = instances.compactMap { $0 }
        var removedInEffect: Set<ChangedKey> = []
        var removedWinners: [ChangedKey: [ChangeEffect.Shadow]] = [:]
        for environment in environments {
            for instance in instances {
                var after = candidate
                after.environment = environment
                after.instance = instance
                var before = base
                before.environment = environment
                before.instance = instance
                guard let new = try? Environment(options: after).snapshot else { continue }
                let old = try? Environment(options: before).snapshot
                let label = ChangeEffect.Configuration(environment: environment, instance: new.instanceName)
                let isDaemons = environment == daemon?.environment && new.instanceName == daemon?.instance
                for change in changes where change.applies(environment: environment, instance: new.instanceName) {
                    let now = Self.entry(change.key, in: new)
                    let then = old.flatMap { Self.entry(change.key, in: $0) }
                    switch change.kind {
                    case .written:
                        written(
                            change, in: label, now: now, then: then,
                            daemonSource: isDaemons ? daemonSources[change.key] : nil, shown: lines ?? contents,
                            into: &effect)
                    case .removed:
                        if let then, isFromChange(then.value.source, change) {
                            removedInEffect.insert(change)
                        } else if let then {
                            removedWinners[change, default: []].append(
                                .init(
                                    change: change, configuration: label,
                                    winner: describe(then, key: then.key, candidate: lines)))
                        }
                    }
                }
            }
        }
        for change in changes where change.kind == .removed && !removedInEffect.contains(change) {
            effect.removedWithoutEffect.append((change, removedWinners[change] ?? []))
        }
        return effect
    }

    /// What writing `change` does in one configuration, added to `effect`: shadowed by the
    /// running daemon's own source (`daemonSource`) or by the entry that wins (`now`, from
    /// another source), or in effect, replacing a more specific value from another file
    /// (`then`); in effect as such, nothing.
    private func written(
        _ change: ChangedKey, in configuration: ChangeEffect.Configuration, now: (key: String, value: ConfiguredValue)?,
        then: (key: String, value: ConfiguredValue)?, daemonSource: String?, shown: Data,
        into effect: inout ChangeEffect
    ) {
        if let daemonSource {
            effect.shadowed.append(
                .init(
                    change: change, configuration: configuration,
                    winner: "set by \(daemonSource) in the running daemon, which outweighs every file"))
        } else if let now, isFromChange(now.value.source, change) {
            if let then, Self.specificity(then.value.source) > Self.specificity(now.value.source),
                !sameFile(then.value.source.file, path)
            {
                effect.replacements.append(
                    .init(
                        change: change, configuration: configuration,
                        replaced: describe(then, key: then.key, candidate: nil)))
            }
        } else {
            let winner = now.map { describe($0, key: $0.key, candidate: shown) } ?? "none (no value)"
            effect.shadowed.append(.init(change: change, configuration: configuration, winner: winner))
        }
    }

    /// The key's entry, or that of the closest dictionary above it that holds a value of
    /// another type (which then hides it), with the key it was found at.
    private static func entry(_ key: String, in snapshot: EnvironmentSnapshot) -> (
        key: String, value: ConfiguredValue
    )? {
        if let value = snapshot.configuredValue(forKey: key) { return (key, value) }
        guard var components = try? SettingPath(parsing: key).components else { return nil }
        while components.count > 1 {
            components.removeLast()
            guard let prefix = try? SettingPath(components: components).description else { return nil }
            if let value = snapshot.configuredValue(forKey: prefix) { return (prefix, value) }
        }
        return nil
    }

    /// Whether `source` is the change's section of this drop-in.
    private func isFromChange(_ source: ValueSource, _ change: ChangedKey) -> Bool {
        guard [.common, .environment, .instance].contains(source.layer), sameFile(source.file, path) else {
            return false
        }
        return (source.section ?? (source.layer == .common ? "Common" : "")) == change.section
    }

    /// Common 0, an environment 1, an instance 2: a value of a narrower section that a wider
    /// one in a later file replaces.
    private static func specificity(_ source: ValueSource) -> Int {
        switch source.layer {
        case .instance: 2
        case .environment: 1
        default: 0
        }
    }

    private func sameFile(_ file: String?, _ other: String) -> Bool {
        guard let file else { return false }
        if file == other { return true }
        guard let left = Self.realPath(file), let right = Self.realPath(other) else {
            return false
        }
        return left == right
    }

    /// `realpath(3)` of `path`, or `nil` when it does not resolve.
    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `10s from /etc/app/Environments.plist.d/95-ops.plist:9 [Common]`; a secret as `<redacted>`.
    private func describe(_ entry: (key: String, value: ConfiguredValue), key: String, candidate: Data?) -> String {
        let value = entry.value
        var text = value.displayValue()
        if case .dictionary = value.value { text = "a dictionary" }
        let source = value.source
        guard [.common, .environment, .instance].contains(source.layer), let file = source.file else {
            return "\(text) from \(source)"
        }
        let section = source.section ?? "Common"
        let data =
            sameFile(file, path)
            ? candidate ?? FileManager.default.contents(atPath: file) : FileManager.default.contents(atPath: file)
        let sectionPath =
            section.hasPrefix("Instances.") ? ["Instances", String(section.dropFirst("Instances.".count))] : [section]
        let components = (try? SettingPath(parsing: key).components) ?? [key]
        let line = data.flatMap { KeyLines.line(of: sectionPath + components, in: $0) }
        return "\(text) from \(file)\(line.map { ":\($0)" } ?? "") [\(section)]"
    }

    /// The instances the files name in their `Instances` dictionaries, sorted.
    private func instanceNames(_ options: EnvironmentOptions) -> [String] {
        var names: Set<String> = []
        let dropIns = PathNames.join(directory, fileName + ".d")
        let files =
            [PathNames.join(directory, fileName)]
            + ((try? FileManager.default.contentsOfDirectory(atPath: dropIns)) ?? [])
            .filter { ConfigurationLocation.isDropInFileName($0) }
            .map { PathNames.join(dropIns, $0) }
        for file in Set(files + [path]) {
            guard let data = options.candidateDocuments[file] ?? FileManager.default.contents(atPath: file),
                let root = try? PropertyListReading.root(data, file: file),
                case .dictionary(let instances) = root["Instances"]
            else { continue }
            names.formUnion(instances.keys)
        }
        return names.sorted()
    }
}
