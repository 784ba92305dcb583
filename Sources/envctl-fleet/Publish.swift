#if Fleet
    import ArgumentParser
    import Environments
    import EtcdFleetClient

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Validate property-list files as the fleet's configuration and write them to etcd in one transaction.",
            discussion: """
                A file named Environments.plist becomes the fleet's main document (PREFIX/Environments.plist); any \
                other NAME.plist a drop-in (PREFIX/Environments.plist.d/NAME.plist). envctl reads the fleet at one \
                revision, replaces those documents, and builds the whole resulting configuration as a daemon would \
                (parse, merge, interpolate) for --environment, or for every environment it defines, without any \
                host's own files. Only then does it write, in one transaction that succeeds only if none of the \
                fleet's documents changed after the revision it validated (no document written, created or deleted; \
                other keys under the prefix do not count): two \
                operators cannot interleave, and no combination goes live that was not validated. A publish \
                after which an environment the fleet defines now is defined no more is refused unless \
                --allow-removing-environment names it: hosts that run it would reject the whole fleet. \
                With --schema FILE (the application's declared settings, as envctl schema prints them or its \
                package installs them), every environment is also checked against the declaration: a value of \
                the wrong type or out of its bounds is refused, and keys no declaration covers are listed as \
                warnings (--strict refuses them). Whether a required setting is set is left to each host, whose \
                own files may set it. The application's own validation runs on each host when the change arrives. \
                With --stage 5%,25%,100% the publish is staged: the validated documents go first to that share of \
                the hosts that report their status (a number is a count of hosts, other words host ids), chosen by a \
                stable hash of the host id; envctl waits until each of them runs them and keeps renewing its status \
                for the settle time, then widens, and at 100% writes them as the fleet's documents. When a host of a \
                stage rejects them, stops renewing or does not apply them within --stage-timeout, every host goes \
                back to the fleet's documents and envctl names the hosts and why (exit status 1). A publish whose \
                last step is below 100% is held there. --resume goes on with a held or interrupted publish (after \
                envctl was stopped, say), --abort rolls it back; while one is in progress, other publishes are refused.
                """)

        @OptionGroup var fleet: FleetOptions

        @Option(help: "Validate for this environment only (default: every environment the documents define).")
        var environment: String?

        @Option(help: "Validate with this instance's Instances entries too (default: $APP_INSTANCE).")
        var instance: String?

        @Option(
            name: .customLong("allow-removing-environment"),
            help:
                "Publish even though this environment, defined by the fleet now, would be defined no more (repeatable)."
        )
        var removableEnvironments: [String] = []

        @OptionGroup var schema: SchemaOptions

        @Flag(
            help:
                "Refuse to publish on any warning (a key written twice; with --schema, a key no declaration covers), as envctl check --strict does."
        )
        var strict = false

        @Option(
            name: .customLong("stage"),
            help: ArgumentHelp(
                "Publish in stages: shares (5%), counts of hosts (3) or host ids, comma-separated (repeatable).",
                valueName: "steps"))
        var stages: [String] = []

        @Option(
            help: ArgumentHelp(
                "How long a stage's hosts must keep running the documents before the next stage (default 60s; at least their status TTL).",
                valueName: "duration"))
        var settle: String?

        @Option(
            name: .customLong("stage-timeout"),
            help: ArgumentHelp("How long a stage's hosts may take to apply the documents.", valueName: "duration"))
        var stageTimeout: String = "5m"

        @Flag(
            help: "Go on with the staged publish in progress (held, or interrupted); --stage replaces its next steps.")
        var resume = false

        @Flag(help: "Roll back the staged publish in progress: every host returns to the fleet's documents.")
        var abort = false

        @Argument(help: "The property-list files to publish.")
        var files: [String] = []

        func run() throws {
            guard let configuration = try fleet.configuration() else {
                throw Failure("publish needs --etcd-endpoints (or $\(EtcdConfiguration.endpointsVariable))")
            }
            if resume || abort {
                guard !(resume && abort) else { throw Failure("give --resume or --abort, not both") }
                guard files.isEmpty else { throw Failure("--\(resume ? "resume" : "abort") takes no file") }
                return try resume ? resumePublish(configuration) : abortPublish(configuration)
            }
            guard !files.isEmpty else { throw Failure("no file to publish") }
            let steps = try stages.isEmpty ? nil : Self.steps(stages)
            let documents = try readFiles(configuration)
            // An empty directory: the fleet alone, no host's files, for reading and building.
            let empty = PathNames.join(FileManager.default.temporaryDirectory.path, "envctl-\(UUID().uuidString)")
            try? FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: empty) }
            var state = try FleetOptions.read(configuration, acceptingViolation: true)
            let validated = state.revision
            if let rollout = state.entries[FleetRollout.key(prefix: configuration.prefix)] {
                throw Failure(Self.inProgress(FleetRollout.decode(rollout.value), configuration))
            }
            let baseFingerprint = state.fingerprint
            let expected = try Self.expectedRevisions(state, publishing: documents)
            let definedNow = Self.definedEnvironments(state.documents, emptyDirectory: empty)
            for (key, value) in documents {
                state.entries[key] = FleetState.Entry(value: value, modRevision: validated + 1)
            }
            // The daemons would refuse what is past their limits (envctl's own, from the same
            // variables): so is it here.
            state.enforce(configuration.limits)
            if let violation = state.violation { throw Failure("not published: \(violation)") }
            try checkNoEnvironmentRemoved(definedNow: definedNow, after: state, emptyDirectory: empty)
            let environments = try validate(state, emptyDirectory: empty)
            if let steps {
                return try stagedPublish(
                    state, steps: steps, validated: validated, baseFingerprint: baseFingerprint, expected: expected,
                    environments: environments, configuration)
            }
            try commit(
                documents, validated: validated, expected: expected, environments: environments, configuration)
        }

        /// The files to publish, each with its key: `Environments.plist` is the main document, a
        /// drop-in `NAME.plist` one of the drop-in directory's; two files for one key are an error.
        private func readFiles(_ configuration: EtcdConfiguration) throws -> [(key: String, value: Data)] {
            var documents: [(key: String, value: Data)] = []
            for file in files {
                let name = PathNames.lastComponent(of: file)
                let key: String
                if name == "Environments.plist" {
                    key = FleetState.mainKey(prefix: configuration.prefix)
                } else if ConfigurationLocation.isDropInFileName(name) {
                    key = FleetState.dropInKey(prefix: configuration.prefix, name: name)
                } else {
                    throw Failure(
                        "\(file): not Environments.plist nor a drop-in NAME.plist; rename it to say which it is")
                }
                guard !documents.contains(where: { $0.key == key }) else {
                    throw Failure("\(file): another file is published as \(key) already")
                }
                do {
                    documents.append((key, Data(try FleetFiles.bytes(file))))
                } catch {
                    throw Failure("\(file): cannot be read: \(error)")
                }
            }
            return documents
        }

        /// The revision of every document read, which must still be there, unchanged, when the
        /// transaction runs; with the fleet past a limit, only documents too large to read are fixed
        /// by publishing them again, and those must be among `documents`.
        private static func expectedRevisions(_ state: FleetState, publishing documents: [(key: String, value: Data)])
            throws -> [String: Int64]
        {
            var expected = state.entries.mapValues(\.modRevision)
            if let violation = state.violation {
                guard violation.limit == "document bytes",
                    Set(violation.unread.keys).isSubset(of: documents.map(\.key))
                else {
                    throw Failure("not published: \(violation)")
                }
                expected.merge(violation.unread) { old, _ in old }
            }
            return expected
        }

        /// An environment the fleet defines now and would not after the publish is refused (hosts
        /// that run it would reject the whole fleet), unless `--allow-removing-environment` names it.
        private func checkNoEnvironmentRemoved(definedNow: Set<String>, after state: FleetState, emptyDirectory: String)
            throws
        {
            let definedAfter = Self.definedEnvironments(state.documents, emptyDirectory: emptyDirectory)
            let removed = definedNow.subtracting(definedAfter).subtracting(removableEnvironments).sorted()
            guard removed.isEmpty else {
                throw Failure(
                    "not published: the fleet defines \(removed.joined(separator: ", ")) now and would not after this "
                        + "publish; hosts that run \(removed.count == 1 ? "it" : "them") would reject the whole fleet. "
                        + "If that is meant, add "
                        + removed.map { "--allow-removing-environment \($0)" }.joined(separator: " "))
            }
        }

        /// Writes `documents` in one transaction, if every document read is unchanged since
        /// `validated` and no staged publish began meanwhile.
        private func commit(
            _ documents: [(key: String, value: Data)], validated: Int64, expected: [String: Int64],
            environments: [String], _ configuration: EtcdConfiguration
        ) throws {
            let puts = documents
            // Nor did a staged publish begin meanwhile.
            let expecting = expected.merging([FleetRollout.key(prefix: configuration.prefix): 0]) { old, _ in old }
            let written = try FleetOptions.blocking { client throws(EtcdError) in
                try await client.commit(
                    puts: puts, deletes: [], prefix: configuration.prefix, ifUnchangedSince: validated,
                    expecting: expecting)
            }(configuration)
            guard let written else {
                throw Failure(
                    "the fleet's documents under \(configuration.prefix) changed after revision \(validated), which was validated, or a staged publish began; "
                        + "nothing was written: run publish again to validate the new state")
            }
            printLine(
                "published \(documents.map(\.key).joined(separator: ", ")) at revision \(written) "
                    + "(validated for \(environments.joined(separator: ", ")) against revision \(validated))")
        }

        /// The environments `documents` define: their top-level dictionaries other than the reserved
        /// keys, read by the library's own parser as a daemon reads them (with `emptyDirectory` as
        /// the configuration directory, so no host's file counts). A document that does not load
        /// defines none (validation reports it).
        private static func definedEnvironments(_ documents: [ConfigurationDocument], emptyDirectory: String)
            -> Set<String>
        {
            var names: Set<String> = []
            for document in documents {
                var options = EnvironmentOptions(applicationName: "envctl", configDirectory: emptyDirectory)
                options.sources = [FixedDocuments(held: [document])]
                guard let defined = try? Environment.definedEnvironments(options) else { continue }
                names.formUnion(defined)
            }
            return names
        }

        /// Builds the configuration for each environment; returns their names.
        private func validate(_ state: FleetState, emptyDirectory: String) throws -> [String] {
            var names: [String]
            if let environment {
                names = [environment]
            } else {
                names = Self.definedEnvironments(state.documents, emptyDirectory: emptyDirectory).sorted()
            }
            if names.isEmpty { names = [BuildInfo().defaultEnvironment] }
            let declaration = try schema.file.map { try Self.fleetDeclaration(SchemaOptions.read($0)) }
            var warned: Set<String> = []
            for name in names {
                var options = EnvironmentOptions(
                    applicationName: "envctl", environment: name, configDirectory: emptyDirectory)
                options.sources = [FixedDocuments(held: state.documents)]
                options.instance = instance
                options.declaration = declaration
                options.warningsAreErrors = strict
                do {
                    let snapshot = try Environment(options: options).snapshot
                    // The same document's warning in every environment: once.
                    for warning in snapshot.warnings where warned.insert(warning.description).inserted {
                        printError("warning: \(warning)")
                    }
                } catch {
                    throw Failure("not published: environment \(name): \(error)")
                }
            }
            return names
        }

        /// The declaration a fleet's documents are checked against: the application's, with every
        /// setting optional, since a host's own files may set what the fleet leaves out.
        static func fleetDeclaration(_ declaration: SettingsDeclaration) -> SettingsDeclaration {
            SettingsDeclaration(
                declaration.settings.map { setting -> any SettingDeclaring in
                    var optional = setting
                    optional.requirement = .optional
                    return optional
                })
        }
    }
#endif
