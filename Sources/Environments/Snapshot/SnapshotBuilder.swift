#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds a complete snapshot: read, select, merge, interpolate, apply restart-only rules,
/// validate. Nothing is swapped here; a thrown error leaves everything as it was.
struct SnapshotBuilder {
    let options: EnvironmentOptions
    /// Runtime overrides in the order they were set, dotted keys allowed.
    let overrides: [RuntimeOverride]
    /// Whether files are read: `false` for an in-memory environment, which uses the options'
    /// built-in configuration alone.
    let readsFiles: Bool

    init(options: EnvironmentOptions, overrides: [RuntimeOverride], readsFiles: Bool) {
        self.options = options
        self.overrides = overrides
        self.readsFiles = readsFiles
    }

    func build(previous: EnvironmentSnapshot?, generation: UInt64) throws(EnvironmentError)
        -> EnvironmentSnapshot
    {
        let location: ConfigurationLocation? = readsFiles ? try ConfigurationLocation.resolved(options) : nil
        var loadWarnings: [ConfigurationWarning] = []
        let files = try readDocuments(location, previous: previous, warnings: &loadWarnings)
        let name = try selectEnvironment(files: files)
        let instance = options.selectedInstance
        try checkInstanceIsKnown(instance, in: files, environment: name)

        var layers = try mergeLayers(of: files, environment: name, instance: instance)
        let appliedVariables = try applyVariables(to: &layers, environment: name)
        try applyOverrides(to: &layers.tree)
        let check = options.declaration.map {
            DeclarationCheck(declaration: $0, environmentName: name, files: files, secrets: layers.secrets)
        }
        var declarationWarnings = check?.applyFormerNames(to: &layers.tree) ?? []

        let merged = layers.tree
        let (resolved, unreadableCredentials) = try interpolate(
            merged, environment: name, secrets: layers.secrets, files: files)
        var tree = resolved
        var restartRequired = layers.restartRequired
        var pending: [String: ConfiguredValue] = [:]
        if let previous, previous.environmentName == name {
            // The running program's restart-only keys hold until it restarts: a key removed
            // from RestartRequired still waits; one added takes effect at once.
            restartRequired.formUnion(previous.restartRequiredKeys)
            (tree, pending) = try holdingRestartOnlyKeys(
                restartRequired, merged: merged, resolved: resolved, previous: previous, name: name,
                secrets: layers.secrets)
        }

        if let check {
            declarationWarnings += try Self.checkDeclaration(
                check, written: resolved, running: tree, files: files, appliedVariables: appliedVariables,
                prefix: options.variablePrefix ?? "", environment: name)
        }
        let warnings = loadWarnings + files.flatMap(\.warnings) + declarationWarnings
        try refuseWarningsIfStrict(warnings, environment: name)
        let snapshot = EnvironmentSnapshot(
            environmentName: name, instanceName: instance, generation: generation, tree: tree,
            files: files.map(\.file).filter { $0 != builtInLabel }, location: location, secretKeys: layers.secrets,
            restartRequiredKeys: restartRequired, pendingRestart: pending,
            unreadableCredentials: unreadableCredentials, warnings: warnings, logger: options.logger)
        try checkLogLevel(in: snapshot)
        try validate(snapshot)
        return snapshot
    }

    /// What the layers make before interpolation: the tree and the secret and restart-only
    /// keys every layer named.
    private struct MergedLayers {
        var tree: [String: SettingNode] = [:]
        var secrets: Set<String>
        var restartRequired: Set<String>
    }

    /// The declared defaults, the options' defaults, then each file's `Common`, environment and
    /// instance sections, lowest first; the secret and restart-only keys of the options, the
    /// declaration and every file.
    private func mergeLayers(of files: [EnvironmentsFile], environment name: String, instance: String?)
        throws(EnvironmentError) -> MergedLayers
    {
        var layers = MergedLayers(
            secrets: try Self.canonical(options.secretKeys, in: "EnvironmentOptions.secretKeys"),
            restartRequired: try Self.canonical(
                options.restartRequiredKeys, in: "EnvironmentOptions.restartRequiredKeys"))
        var pathBytes = 0
        if let declaration = options.declaration {
            // Declared defaults first: the application's own `defaults` win over them.
            for (path, value) in declaration.defaults {
                SettingTree.setNode(
                    .leaf(ConfiguredValue(value: value, source: .defaults)), at: path, in: &layers.tree)
            }
        }
        let defaults = try Self.expanding(
            options.defaults, in: "the defaults (EnvironmentOptions.defaults)", pathBytes: &pathBytes)
        SettingTree.merge(defaults, into: &layers.tree, source: .defaults)
        // A declaration adds to the lists; it never takes a key off one.
        if let declaration = options.declaration {
            layers.secrets.formUnion(declaration.secretKeys)
            layers.restartRequired.formUnion(declaration.restartOnlyKeys)
        }
        for file in files {
            mergeSections(of: file, environment: name, instance: instance, into: &layers.tree)
            layers.secrets.formUnion(file.secrets)
            layers.restartRequired.formUnion(file.restartRequired)
        }
        return layers
    }

    /// One file's `Common`, then its section for the environment, then its instance's.
    private func mergeSections(
        of file: EnvironmentsFile, environment name: String, instance: String?, into tree: inout [String: SettingNode]
    ) {
        let label = file.file == builtInLabel ? nil : file.file
        SettingTree.merge(
            file.common, into: &tree, source: ValueSource(layer: .common, file: label, section: "Common"))
        if let section = file.environments[name] {
            SettingTree.merge(
                section, into: &tree, source: ValueSource(layer: .environment, file: label, section: name))
        }
        if let instance, let section = file.instances[instance] {
            SettingTree.merge(
                section, into: &tree,
                source: ValueSource(layer: .instance, file: label, section: "Instances.\(instance)"))
        }
    }

    /// The process's `PREFIX_...` variables over the layers, when the options name a prefix;
    /// returns which variable set which path.
    private func applyVariables(to layers: inout MergedLayers, environment name: String)
        throws(EnvironmentError) -> [(variable: String, path: [String])]
    {
        guard let prefix = options.variablePrefix, !prefix.isEmpty else { return [] }
        return try VariableOverrides(
            prefix: prefix, options: options,
            declared: [layers.secrets, layers.restartRequired, options.declaration?.keysAndFormerNames ?? []]
        ).apply(to: &layers.tree, environment: name, secretPaths: layers.secrets)
    }

    /// The runtime overrides over everything, each in turn, so the later of two that reach one
    /// path wins.
    private func applyOverrides(to tree: inout [String: SettingNode]) throws(EnvironmentError) {
        for override in overrides {
            var overrideBytes = 0
            let values = try Self.expanding(
                [override.key: override.value], in: "the override of '\(Sentences.shown(override.key))'",
                pathBytes: &overrideBytes)
            SettingTree.merge(values, into: &tree, source: .override)
        }
    }

    /// `merged` with every `${...}` replaced, and the keys whose credentials could not be read
    /// (placeholders, when the options allow them). A missing credential's error points at the
    /// line that names it; a secret's references are withheld from the message.
    private func interpolate(
        _ merged: [String: SettingNode], environment name: String, secrets: Set<String>, files: [EnvironmentsFile]
    ) throws(EnvironmentError) -> ([String: SettingNode], unreadableCredentials: [String: Set<String>]) {
        var interpolator = Interpolator(
            tree: merged, environmentName: name, processEnvironment: options.processEnvironment, secretPaths: secrets,
            usesPlaceholders: options.unreadableCredentialsAsPlaceholders)
        do {
            let resolved = try interpolator.resolve(merged)
            return (resolved, interpolator.keysWithUnreadableCredentials())
        } catch {
            throw Self.withholdingSecretReferences(
                Self.pointingAtCredential(error, name: interpolator.missingCredentialName, in: files),
                secretPaths: secrets)
        }
    }

    let builtInLabel = "<built-in configuration>"

    /// A section that is no file's (the defaults, one override) with its top-level keys taken
    /// as paths (``SectionKeys``).
    private static func expanding(_ values: [String: SettingValue], in place: String, pathBytes: inout Int)
        throws(EnvironmentError) -> [String: SettingValue]
    {
        do {
            return try SectionKeys.expand(values, totalPathBytes: &pathBytes) { first, second, path in
                SettingTree.conflictError(first, second, path: path, in: place, code: .invalidSection)
            }
        } catch {
            var failure = error.error
            if failure.code == .invalidKey { failure.message = "in \(place): " + failure.message }
            throw failure
        }
    }

    /// Key paths given in the options, in their canonical text (``SettingPath``).
    private static func canonical(_ keys: Set<String>, in place: String) throws(EnvironmentError) -> Set<String> {
        var result: Set<String> = []
        for key in keys.sorted() {
            do {
                result.insert(try SettingPath(parsing: key).description)
            } catch {
                var error = error
                error.message = "in \(place): " + error.message
                throw error
            }
        }
        return result
    }

    /// The tree to run with while restart-only keys wait for a restart, and what waits.
    ///
    /// A restart-only key whose value changed keeps its running value (`previous`'s), and so
    /// does every value built from it through `${...}`, directly or through other keys: those
    /// are interpolated again against the running values. Each is listed in the pending
    /// restarts with its new value. If the running values cannot be interpolated (a key that
    /// uses a restart-only key the running program does not have), the reload is rejected.
    ///
    /// - Parameters:
    ///   - merged: The layered tree, before interpolation.
    ///   - resolved: `merged` interpolated: the new values.
    private func holdingRestartOnlyKeys(
        _ restartRequired: Set<String>, merged: [String: SettingNode], resolved: [String: SettingNode],
        previous: EnvironmentSnapshot, name: String, secrets: Set<String>
    ) throws(EnvironmentError) -> ([String: SettingNode], [String: ConfiguredValue]) {
        func waiting(_ node: SettingNode?) -> ConfiguredValue {
            node.map { ConfiguredValue(value: $0.value, source: $0.source, isSecret: $0.containsSecret) }
                ?? ConfiguredValue(value: .string("<removed>"), source: .defaults)
        }
        var pending: [String: ConfiguredValue] = [:]
        var held = merged
        for key in restartRequired.sorted() {
            guard let path = try? SettingPath(parsing: key).components else { continue }
            let old = previous.node(at: key)
            let new = SettingTree.node(at: path, in: resolved)
            guard old?.contentIgnoringSources != new?.contentIgnoringSources else { continue }
            pending[key] = waiting(new)
            SettingTree.setNode(old, at: path, in: &held)
        }
        if pending.isEmpty { return (resolved, pending) }

        var interpolator = Interpolator(
            tree: held, environmentName: name, processEnvironment: options.processEnvironment, secretPaths: secrets,
            held: Set(pending.keys), usesPlaceholders: options.unreadableCredentialsAsPlaceholders)
        interpolator.recordsReferences = true
        let running: [String: SettingNode]
        do {
            running = try interpolator.resolve(held)
        } catch {
            var error = Self.withholdingSecretReferences(error, secretPaths: secrets)
            let keys = pending.keys.sorted().map(Sentences.shown).joined(separator: ", ")
            error.message =
                "with the restart-only keys that changed (\(keys)) at their running values, as they stay until a restart: "
                + error.message
            error.hint = "Restart the service to apply the new values of \(keys) and of the keys that use them"
            throw error
        }
        for key in interpolator.keys(dependingOn: Set(pending.keys)).sorted() where pending[key] == nil {
            guard let path = try? SettingPath(parsing: key).components else { continue }
            let new = SettingTree.node(at: path, in: resolved)
            guard new?.contentIgnoringSources != SettingTree.node(at: path, in: running)?.contentIgnoringSources
            else { continue }
            pending[key] = waiting(new)
        }
        return (running, pending)
    }

    /// Every file the configuration is built from, in the order they apply: the sources'
    /// documents, then the host's files (or the built-in configuration).
    ///
    /// - Parameter location: Where the host's files are; `nil` for the built-in configuration alone.
    /// - Parameter previous: The running configuration, if any: a reload that finds the
    ///   directory it was read from gone is rejected.
    func readDocuments(
        _ location: ConfigurationLocation?, previous: EnvironmentSnapshot?, warnings: inout [ConfigurationWarning]
    ) throws(EnvironmentError) -> [EnvironmentsFile] {
        var files: [EnvironmentsFile] = []
        for source in options.sources {
            for document in try source.documents() {
                files.append(
                    try EnvironmentsFile(
                        PropertyListDocument(data: document.data, file: document.origin), isDropIn: false))
            }
        }
        if let location {
            try checkDirectoryIsStillThere(previous: previous)
            files += try readConsistentFiles(location, hasBaseLayer: !options.sources.isEmpty, warnings: &warnings)
        } else {
            files.append(try EnvironmentsFile(root: options.builtInConfiguration ?? [:], label: builtInLabel))
        }
        return files
    }

    /// A configuration directory that held the running configuration's files and is now gone
    /// entirely is a broken deploy (an unmounted file system, a directory moved aside), not a
    /// wish to run on the built-in configuration: the reload is rejected. Removing
    /// `Environments.plist` and its drop-ins (the directory stays) is how to go back to it.
    /// (A directory named explicitly never gets here missing: resolving it fails.)
    private func checkDirectoryIsStillThere(previous: EnvironmentSnapshot?) throws(EnvironmentError) {
        // The directory the running configuration came from, whichever one the search would
        // pick now (without it, a later candidate or the first one).
        guard let directory = previous?.location?.directory,
            previous?.files.contains(where: { $0.hasPrefix(directory + "/") }) == true,
            case .absent = FileAccess.presence(of: directory, subject: "the configuration directory")
        else { return }
        throw EnvironmentError(
            .fileNotFound,
            "the configuration directory no longer exists; the running configuration was read from it and stays",
            file: directory,
            hint:
                "Restore it. To run on the built-in configuration, remove \(options.fileName) and its drop-ins, not the directory"
        )
    }

    /// A missing credential's error with the line of its `${credential:NAME}` in the file that
    /// holds it (XML files; a binary property list has no lines).
    static func pointingAtCredential(_ error: EnvironmentError, name: String?, in files: [EnvironmentsFile])
        -> EnvironmentError
    {
        guard error.code == .missingCredential, error.line == nil, let name, let file = error.file,
            let document = files.first(where: { $0.file == file })?.document
        else { return error }
        var pointed = error
        pointed.line = document.line(ofText: "${credential:\(name)}")
        return pointed
    }

    /// An interpolation error about a secret key's value, without the `${...}` text it quotes:
    /// in a secret written literally (a password with `${` in it), that text is part of the
    /// secret. Errors about credentials and environment variables keep their names; cycles name
    /// keys only.
    static func withholdingSecretReferences(_ error: EnvironmentError, secretPaths: Set<String>) -> EnvironmentError {
        guard error.code == .unresolvedReference || error.code == .invalidInterpolation, let key = error.key,
            Interpolator.isSecret(String(key.prefix { $0 != "[" }), in: Interpolator.folded(secretPaths))
        else { return error }
        var withheld = error
        withheld.message =
            "the secret value of '\(key)' has a '${...}' that cannot be expanded (\(error.code)); "
            + "it is not shown, as it may be part of the secret"
        withheld.hint = "Check the '${...}' in its value, and write '$${' for a literal '${'"
        return withheld
    }

    /// How often the files are read, at most, when changes that span files begin or end (or
    /// files are replaced) while they are read.
    static let consistentReadAttempts = 5

    /// The host's files as ``readFiles(_:hasBaseLayer:before:)`` reads them, as one state: while
    /// a change that spans files is under way (its ``TransactionJournal`` is in the drop-in
    /// directory), the files it names as they were before it, with a warning. When the journal
    /// appears, goes or changes while the files are read, a copy of an old file it names is
    /// gone (the change completed meanwhile), or a file it does not name was replaced or added,
    /// they are read again; at most ``consistentReadAttempts`` times.
    private func readConsistentFiles(
        _ location: ConfigurationLocation, hasBaseLayer: Bool, warnings: inout [ConfigurationWarning]
    ) throws(EnvironmentError) -> [EnvironmentsFile] {
        for _ in 0..<Self.consistentReadAttempts {
            let journal = try TransactionJournal.read(in: location.dropInDirectory)
            if let outside = journal?.fileOutside({
                TransactionJournal.isConfigurationFile(
                    $0, mainFile: location.mainFile, dropInDirectory: location.dropInDirectory)
            }) {
                throw EnvironmentError(
                    .fileUnreadable,
                    "is not the journal of a change that envctl makes: it names \(outside), which is not a file of this configuration",
                    file: TransactionJournal.path(in: location.dropInDirectory),
                    hint:
                        "A journal names only the configuration's Environments.plist and its drop-ins; look at what the file holds, remove it, and check every file it names (envctl check)"
                )
            }
            let identities = Self.fileIdentities(location, except: journal)
            let files: [EnvironmentsFile]
            do {
                files = try readFiles(location, hasBaseLayer: hasBaseLayer, before: journal)
            } catch {
                // A copy of an old file that is gone, or a file replaced meanwhile, is no error
                // of the configuration when a change began or ended while it was read.
                if try TransactionJournal.read(in: location.dropInDirectory) != journal { continue }
                throw error
            }
            // The journal is removed before the copies of old files, and a new one names new
            // copies: the same journal after the read means the same state throughout. A whole
            // change made while the files were read (its journal written and removed) replaced
            // at least one of them: the files are read again.
            guard try TransactionJournal.read(in: location.dropInDirectory) == journal,
                Self.fileIdentities(location, except: journal) == identities
            else { continue }
            if let journal {
                warnings.append(
                    journal.warning(
                        journalPath: TransactionJournal.path(in: location.dropInDirectory),
                        completion: "\(journal.command) --resume --config-dir \(location.directory)"))
            }
            return files
        }
        throw EnvironmentError(
            .fileUnreadable,
            "the configuration's files kept being replaced while they were read (\(Self.consistentReadAttempts) times)",
            file: TransactionJournal.path(in: location.dropInDirectory),
            hint: "Reload again once they are done")
    }

    /// Which file each of the configuration's paths is (the main file and the drop-ins, links
    /// followed: device and inode), but for those a journal names (read from their old
    /// copies): a path replaced or added between two calls gives another answer.
    private static func fileIdentities(_ location: ConfigurationLocation, except journal: TransactionJournal?)
        -> [String: [UInt64]]
    {
        let named = Set((journal?.entries ?? []).map { TransactionJournal.resolved($0.target) })
        var identities: [String: [UInt64]] = [:]
        for path in [location.mainFile] + ((try? location.dropInFiles()) ?? [])
        where named.isEmpty || !named.contains(TransactionJournal.resolved(path)) {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            identities[path] = [UInt64(status.st_dev), UInt64(status.st_ino)]
        }
        return identities
    }

    /// The host's files. With a source, a missing main file is no error (and the built-in
    /// configuration is not used: the layer is the configuration).
    ///
    /// Only a main file that is not there at all is missing: one that cannot be read (a
    /// dangling or looping symbolic link, no permission, an I/O error) is an error. A drop-in
    /// that disappears between listing its directory and reading it is skipped.
    ///
    /// With `before` (a change that spans files is under way), each file it names is read as it
    /// was before the change: from the copy of its old contents, or not at all when the change
    /// creates it.
    private func readFiles(_ location: ConfigurationLocation, hasBaseLayer: Bool, before journal: TransactionJournal?)
        throws(EnvironmentError) -> [EnvironmentsFile]
    {
        var files: [EnvironmentsFile] = []
        let candidates = options.candidateDocuments
        var before: [String: String?] = [:]
        // By the path with its directory's symbolic links resolved: the journal and the
        // configuration may spell a directory differently.
        for entry in journal?.entries ?? [] { before[TransactionJournal.resolved(entry.target)] = .some(entry.old) }
        func document(_ path: String) throws(EnvironmentError) -> PropertyListDocument {
            guard !before.isEmpty, let old = before[TransactionJournal.resolved(path)] else {
                return try self.document(path)
            }
            do {
                return try self.document(path, before: [path: old])
            } catch  where error.code == .fileNotFound && journal?.rollingBack == true && old != nil {
                // Being undone: a file whose old copy is gone has its old contents back.
                return try self.document(path)
            }
        }
        var main: EnvironmentsFile?
        do {
            main = try EnvironmentsFile(document(location.mainFile), isDropIn: false)
        } catch  where error.code == .fileNotFound {
            // Nothing there (a dangling link is `fileUnreadable`).
        }
        if let main {
            files.append(main)
        } else if hasBaseLayer {
            // Only the layer, or the layer and drop-ins.
        } else if let builtIn = options.builtInConfiguration {
            files.append(try EnvironmentsFile(root: builtIn, label: builtInLabel))
        } else {
            throw EnvironmentError(
                .fileNotFound, "no \(options.fileName) found",
                searchedFiles: location.searchedDirectories.map {
                    PathNames.join($0, options.fileName)
                },
                hint: "Create it, or point --config-dir or $CONFIGURATION_DIRECTORY at the directory that holds it")
        }
        var dropIns = try location.dropInFiles()
        for path in candidates.keys.sorted()
        where PathNames.directory(of: path) == location.dropInDirectory
            && ConfigurationLocation.isDropInFileName(PathNames.lastComponent(of: path)) && !dropIns.contains(path)
        {
            dropIns.append(path)
        }
        dropIns.sort { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for path in dropIns {
            do {
                files.append(try EnvironmentsFile(document(path), isDropIn: true))
            } catch  where error.code == .fileNotFound {
                // Removed since the directory was listed: it is not there.
            } catch var error {
                if error.code != .invalidDropIn && error.code != .invalidKey {
                    error.message = "drop-in " + error.message
                }
                throw error
            }
        }
        return files
    }

    /// The document at `path`: a candidate's contents, else, while a change that spans files
    /// is under way, the file as it was before it (`before`: the copy of its old contents by
    /// path, `nil` for a file the change creates), else the file on disk.
    ///
    /// A copy of old contents that is gone (the change completed meanwhile) is `fileNotFound`;
    /// ``readConsistentFiles(_:hasBaseLayer:warnings:)`` then reads the files again.
    private func document(_ path: String, before: [String: String?] = [:]) throws(EnvironmentError)
        -> PropertyListDocument
    {
        if let data = options.candidateDocuments[path] { return try PropertyListDocument(data: data, file: path) }
        if let entry = before[path] {
            guard let old = entry else {
                throw EnvironmentError(.fileNotFound, "does not exist before the change under way", file: path)
            }
            return try PropertyListDocument(data: PropertyListDocument.readRegularFile(old), file: path)
        }
        return try PropertyListDocument(contentsOf: path)
    }

    private func selectEnvironment(files: [EnvironmentsFile]) throws(EnvironmentError) -> String {
        let requested: String
        let how: String
        if let explicit = options.environment, !explicit.isEmpty {
            (requested, how) = (explicit, options.environmentOrigin ?? "set by the application")
        } else if let fromVariable = options.processEnvironment[options.environmentVariable], !fromVariable.isEmpty {
            (requested, how) = (fromVariable, "selected by $\(options.environmentVariable)")
        } else {
            (requested, how) = (options.build.defaultEnvironment, "the build's default")
        }
        if let allowed = options.build.allowedEnvironments, !allowed.contains(requested) {
            throw EnvironmentError(
                .disallowedEnvironment,
                "environment '\(requested)' (\(how)) is not allowed in this build; allowed: \(allowed.joined(separator: ", "))",
                environment: requested, hint: "Select one of the allowed environments")
        }
        let known = Set(files.flatMap(\.environments.keys))
        guard known.contains(requested) else {
            let list = known.isEmpty ? "none defined" : known.sorted().joined(separator: ", ")
            throw EnvironmentError(
                .unknownEnvironment, "unknown environment '\(requested)' (\(how)); known environments: \(list)",
                environment: requested, searchedFiles: files.map(\.file),
                hint: "Select a known environment, or add a '\(requested)' dictionary to \(options.fileName)")
        }
        return requested
    }
}

/// One runtime override: a key (dotted paths allowed) and its value.
struct RuntimeOverride: Sendable, Equatable {
    let key: String
    let value: SettingValue
}

extension [RuntimeOverride] {
    /// Sets (or, with `nil`, removes) the override of `key`; a set one goes last, so it wins
    /// over every earlier override that reaches the same path.
    mutating func set(_ value: SettingValue?, forKey key: String) {
        removeAll { $0.key == key }
        if let value { append(RuntimeOverride(key: key, value: value)) }
    }
}
