#if Fleet
    import EtcdFleetClient
    import EtcdTestSupport
    import Foundation
    import TestSupport
    import Testing

    /// `envctl publish`, `show` and `get` against a real cluster, and the transaction that keeps two
    /// publishers from interleaving.
    @Suite(
        "envctl and the fleet", .serialized,
        .enabled(if: EtcdCluster.isAvailable, "needs etcd: apt-get install etcd-server"), .blocking)
    struct PublishTests {
        private func envctl(_ arguments: [String]) throws -> FinishedProcess {
            try runToEnd(BuiltProducts.envctl, arguments, environment: operatorEnvironment())
        }

        /// What a publisher validated with: each document's revision, and the revision it read at.
        typealias Validated = (expected: [String: Int64], revision: Int64)

        /// Commits `common` as the fleet's main document, as `envctl publish` does: only if no
        /// document changed since `validated`.
        static func commitMain(_ common: [String: String], _ fleet: FleetHarness, _ validated: Validated)
            async throws -> Int64?
        {
            try await fleet.writer.commit(
                puts: [(fleet.prefix + "Environments.plist", FleetHarness.document(common: common))], deletes: [],
                prefix: fleet.prefix, ifUnchangedSince: validated.revision, expecting: validated.expected)
        }

        @Test("publish validates, writes in one transaction, and show/get read the result below the files")
        func publishShowAndGet() async throws {
            try await FleetHarness.withFleet { fleet in
                let files = try fleet.makeDirectory("publish")
                let main = files.appendingPathComponent("Environments.plist")
                let dropIn = files.appendingPathComponent("50-eu.plist")
                try FleetHarness.document(
                    common: ["Region": "us", "Greeting": "hello ${Region}"], production: ["Mode": "live"]
                )
                .write(to: main)
                try FleetHarness.document(common: ["Region": "eu"]).write(to: dropIn)
                let endpoints = fleet.envctlOptions

                let published = try envctl(["publish"] + endpoints + [main.path, dropIn.path])
                #expect(published.status == 0, "\(published.output)")
                #expect(
                    published.output.contains(
                        "published \(fleet.prefix)Environments.plist, \(fleet.prefix)Environments.plist.d/50-eu.plist"))
                let (keyValues, _) = try await fleet.writer.range(prefix: fleet.prefix)
                #expect(
                    keyValues.map(\.key).sorted() == [
                        fleet.prefix + "Environments.plist", fleet.prefix + "Environments.plist.d/50-eu.plist",
                    ])

                // What a host with no files of its own would run with, and where each value comes from.
                let host = try fleet.makeDirectory("empty-host")
                let shown = try envctl(["show", "--config-dir", host.path, "--environment", "Production"] + endpoints)
                #expect(shown.status == 0, "\(shown.output)")
                #expect(shown.output.contains("Greeting = hello eu"), "\(shown.output)")
                #expect(
                    shown.output.contains("etcd:\(fleet.prefix)Environments.plist.d/50-eu.plist@"), "\(shown.output)")
                let got = try envctl(
                    ["get", "Mode", "--config-dir", host.path, "--environment", "Production"] + endpoints)
                #expect(got.output == "live\n", "\(got.output)")

                // A document that breaks the configuration is not written; nothing changes in etcd.
                let broken = files.appendingPathComponent("60-broken.plist")
                try FleetHarness.document(common: ["Greeting": "${Missing}"]).write(to: broken)
                let (_, before) = try await fleet.writer.range(prefix: fleet.prefix)
                let refused = try envctl(["publish"] + endpoints + [broken.path])
                #expect(refused.status == 1)
                #expect(refused.output.contains("not published"), "\(refused.output)")
                #expect(refused.output.contains("Missing"), "\(refused.output)")
                let (afterKeys, after) = try await fleet.writer.range(prefix: fleet.prefix)
                #expect(after == before)
                #expect(afterKeys.count == 2)

                // Nor is one whose interpolation has no bound (each key doubles the last): publish
                // validates with the same interpolation as the daemons, under the same caps.
                var doubling = ["A1": "x"]
                for index in 2...30 { doubling["A\(index)"] = "${A\(index - 1)}${A\(index - 1)}" }
                let hostile = files.appendingPathComponent("70-doubling.plist")
                try FleetHarness.document(common: doubling).write(to: hostile)
                let capped = try envctl(["publish"] + endpoints + [hostile.path])
                #expect(capped.status == 1)
                #expect(capped.output.contains("not published") && capped.output.contains("1 MiB"), "\(capped.output)")
                #expect(try await fleet.writer.range(prefix: fleet.prefix).1 == before)

                // Bad input: a file that is neither the main document nor a drop-in, no endpoints.
                let stray = files.appendingPathComponent("notes.txt")
                try Data("x".utf8).write(to: stray)
                let strayOutput = try envctl(["publish"] + endpoints + [stray.path]).output
                #expect(strayOutput.contains("not Environments.plist nor a drop-in"), "\(strayOutput)")
                let noEndpoints = try envctl(["publish", main.path]).output
                #expect(noEndpoints.contains("publish needs --etcd-endpoints"), "\(noEndpoints)")
            }
        }

        @Test("two publishers: the one whose validated revision is stale writes nothing")
        func publishRace() async throws {
            try await FleetHarness.withFleet(publishing: ["Owner": "nobody"]) { fleet in
                let client = fleet.writer
                // Both read the fleet at the same revision and validate against it.
                let (_, validated) = try await client.range(prefix: fleet.prefix)
                let key = fleet.prefix + "Environments.plist"
                let first = try await client.commit(
                    puts: [(key, FleetHarness.document(common: ["Owner": "alice"]))], deletes: [], prefix: fleet.prefix,
                    ifUnchangedSince: validated)
                let second = try await client.commit(
                    puts: [(key, FleetHarness.document(common: ["Owner": "bob"]))], deletes: [], prefix: fleet.prefix,
                    ifUnchangedSince: validated)
                #expect(first != nil)
                #expect(second == nil)
                let (keyValues, _) = try await client.range(prefix: fleet.prefix)
                let stored = String(decoding: keyValues.first?.value ?? Data(), as: UTF8.self)
                #expect(stored.contains("alice"))

                // Through envctl, racing for real: several publishes at once all validate against some
                // revision; those that lost are told so and wrote nothing, and the winners' documents
                // are intact.
                let files = try fleet.makeDirectory("race")
                let endpoints = fleet.envctlOptions
                let outcomes = try await withThrowingTaskGroup(of: FinishedProcess.self) { group in
                    for writer in 0..<4 {
                        let file = files.appendingPathComponent("\(writer)/Environments.plist")
                        try FileManager.default.createDirectory(
                            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                        try FleetHarness.document(common: ["Owner": "writer \(writer)"]).write(to: file)
                        group.addTask { try self.envctl(["publish"] + endpoints + [file.path]) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let won = outcomes.filter { $0.status == 0 }.map(\.output)
                let lost = outcomes.filter { $0.status != 0 }.map(\.output)
                #expect(!won.isEmpty, "\(outcomes)")
                for output in lost {
                    #expect(output.contains("nothing was written"), "\(output)")
                }
                for output in won {
                    #expect(output.contains("published \(fleet.prefix)Environments.plist at revision"), "\(output)")
                }
            }
        }

        @Test("a document deleted or created after the validated revision makes the commit write nothing")
        func deleteOrCreateAfterValidation() async throws {
            try await FleetHarness.withFleet(publishing: ["Region": "us"]) { fleet in
                let client = fleet.writer
                let main = fleet.prefix + "Environments.plist"
                let dropIn = fleet.prefix + "Environments.plist.d/50-eu.plist"
                try await client.put(dropIn, FleetHarness.document(common: ["Region": "eu"]))
                // Every key under the prefix is a document here: a range reads them all.
                func validate() async throws -> Validated {
                    let (keyValues, revision) = try await client.range(prefix: fleet.prefix)
                    return (Dictionary(uniqueKeysWithValues: keyValues.map { ($0.key, $0.modRevision) }), revision)
                }

                // Deleted meanwhile: the drop-in validated with is gone, so that combination is not live.
                var validated = try await validate()
                let deleted = try await client.commit(
                    puts: [], deletes: [dropIn], prefix: fleet.prefix, ifUnchangedSince: validated.revision,
                    expecting: validated.expected)
                #expect(deleted != nil)
                #expect(
                    try await Self.commitMain(["Region": "us", "Owner": "alice"], fleet, validated) == nil,
                    "a commit validated with a drop-in that was deleted since wrote")

                // Created meanwhile: a drop-in nobody validated with.
                validated = try await validate()
                try await client.put(dropIn, FleetHarness.document(common: ["Region": "ap"]))
                #expect(
                    try await Self.commitMain(["Region": "us", "Owner": "bob"], fleet, validated) == nil,
                    "a commit validated without a drop-in that was created since wrote")

                // Nothing changed since: it writes.
                validated = try await validate()
                #expect(try await Self.commitMain(["Owner": "carol"], fleet, validated) != nil)
                let (final, _) = try await client.range(prefix: fleet.prefix)
                let stored = final.first { $0.key == main }.map { String(decoding: $0.value, as: UTF8.self) } ?? ""
                #expect(stored.contains("carol") && !stored.contains("alice") && !stored.contains("bob"))

                // More documents than one transaction can check: an error, nothing sent.
                let many = Dictionary(
                    uniqueKeysWithValues: (0...EtcdClient.maximumExpectedKeys).map {
                        ("\(fleet.prefix)k\($0)", Int64(1))
                    })
                await #expect(throws: EtcdError.self) {
                    try await client.commit(
                        puts: [], deletes: [], prefix: fleet.prefix, ifUnchangedSince: validated.revision,
                        expecting: many)
                }
            }
        }

        @Test(
            "keys outside the layout: 50 blobs of 1.3 MB neither stop envctl nor block a publish; a document change does"
        )
        func foreignKeysDoNotCount() async throws {
            try await FleetHarness.withFleet(publishing: ["Owner": "nobody"]) { fleet in
                let endpoints = fleet.envctlOptions
                let blob = Data(repeating: UInt8(ascii: "x"), count: 1_300_000)
                for index in 0..<50 {
                    try await fleet.writer.put(fleet.prefix + "blobs/\(index)", blob)
                }
                let dropIn = try fleet.makeDirectory("foreign").appendingPathComponent("50-eu.plist")
                try FleetHarness.document(common: ["Region": "eu"]).write(to: dropIn)
                let published = try envctl(["publish"] + endpoints + [dropIn.path])
                #expect(published.status == 0, "\(published.output)")
                let host = try fleet.makeDirectory("foreign-host")
                let got = try envctl(
                    ["get", "Region", "--config-dir", host.path, "--environment", "Production"] + endpoints)
                #expect(got.status == 0 && got.output == "eu\n", "\(got.output)")

                // After the validated revision: a key outside the layout written does not refuse the
                // commit; a drop-in created, the main document written or a drop-in deleted does.
                let client = fleet.writer
                let main = fleet.prefix + "Environments.plist"
                let eu = fleet.prefix + "Environments.plist.d/50-eu.plist"
                // As envctl reads: the documents only (a range over the whole prefix is past 64 MiB).
                let reader = try EtcdClient(
                    configuration: EtcdConfiguration(endpoints: fleet.cluster.endpoints, prefix: fleet.prefix))
                defer { Task { await reader.shutdown() } }
                func readDocuments() async throws -> Validated {
                    let state = try await reader.readFleet()
                    #expect(state.violation == nil)
                    return (state.entries.mapValues(\.modRevision), state.revision)
                }
                var read = try await readDocuments()
                try await client.put(fleet.prefix + "blobs/7", blob + Data("2".utf8))
                try await client.put(fleet.prefix + "notes", Data("x".utf8))
                #expect(
                    try await Self.commitMain(["Owner": "alice"], fleet, read) != nil,
                    "a key outside the layout refused the commit")

                read = try await readDocuments()
                try await client.put(fleet.prefix + "Environments.plist.d/60-new.plist", FleetHarness.document())
                #expect(
                    try await Self.commitMain(["Owner": "bob"], fleet, read) == nil,
                    "a drop-in created after validation did not refuse the commit")

                read = try await readDocuments()
                try await client.put(main, FleetHarness.document(common: ["Owner": "carol"]))
                #expect(
                    try await Self.commitMain(["Owner": "dave"], fleet, read) == nil,
                    "the main document written after validation did not refuse")

                read = try await readDocuments()
                _ = try await client.commit(
                    puts: [], deletes: [eu], prefix: fleet.prefix, ifUnchangedSince: read.revision)
                #expect(
                    try await Self.commitMain(["Owner": "erin"], fleet, read) == nil,
                    "a drop-in deleted after validation did not refuse the commit")
            }
        }

        @Test("publish refuses to leave an environment the fleet defines undefined, unless allowed by name")
        func publishRemovingAnEnvironment() async throws {
            try await FleetHarness.withFleet { fleet in
                let endpoints = fleet.envctlOptions
                let main = try fleet.makeDirectory("removing").appendingPathComponent("Environments.plist")
                func write(_ environments: [String]) throws {
                    let sections = environments.map { "<key>\($0)</key><dict/>" }.joined()
                    try Data(
                        """
                        <?xml version="1.0" encoding="UTF-8"?>
                        <plist version="1.0"><dict><key>Common</key><dict><key>Region</key><string>us</string></dict>\(sections)</dict></plist>
                        """.utf8
                    ).write(to: main)
                }
                try write(["Staging", "Production"])
                let first = try envctl(["publish"] + endpoints + [main.path])
                #expect(first.status == 0, "\(first.output)")

                try write(["Production"])
                let refused = try envctl(["publish"] + endpoints + [main.path])
                #expect(refused.status != 0)
                #expect(refused.output.contains("the fleet defines Staging now and would not"), "\(refused.output)")
                #expect(refused.output.contains("--allow-removing-environment Staging"), "\(refused.output)")
                let (unchanged, _) = try await fleet.writer.range(prefix: fleet.prefix)
                #expect(unchanged.first.map { String(decoding: $0.value, as: UTF8.self).contains("Staging") } == true)

                let allowed = try envctl(
                    ["publish"] + endpoints + ["--allow-removing-environment", "Staging", main.path])
                #expect(allowed.status == 0, "\(allowed.output)")
                let (published, _) = try await fleet.writer.range(prefix: fleet.prefix)
                #expect(published.first.map { String(decoding: $0.value, as: UTF8.self).contains("Staging") } == false)
            }
        }

        @Test(
            "publish --schema refuses a value the daemons' declaration refuses, warns of unknown keys, leaves required to hosts"
        )
        func publishAgainstTheDeclaration() async throws {
            try await FleetHarness.withFleet { fleet in
                let endpoints = fleet.envctlOptions
                let files = try fleet.makeDirectory("declared")
                // The example daemon's declaration, as its package installs it.
                let schema = files.appendingPathComponent("schema.json")
                let printed = try runToEnd(BuiltProducts.exampleDaemon, ["--print-schema"])
                #expect(printed.status == 0)
                try Data(printed.output.utf8).write(to: schema)
                let main = files.appendingPathComponent("Environments.plist")

                // Out of its bounds: refused, nothing written. The files alone are valid.
                try FleetHarness.document(common: ["ListenPort": "70000", "APIBaseUrl": "https://api.example.com"])
                    .write(to: main)
                let refused = try envctl(["publish", "--schema", schema.path] + endpoints + [main.path])
                #expect(refused.status == 1, "\(refused.output)")
                #expect(
                    refused.output.contains("not published") && refused.output.contains("'ListenPort' is out of range"))
                #expect(try await fleet.writer.range(prefix: fleet.prefix).0.isEmpty)

                // A misspelt key: a warning, refused with --strict. APIBaseUrl is required everywhere,
                // and Database.Password in Production: left to the hosts, so not refused here.
                try FleetHarness.document(
                    common: ["ListenPrt": "9000", "APIBaseUrl": "https://api.example.com"],
                    production: ["APIHost": "x.example"]
                ).write(to: main)
                let strict = try envctl(["publish", "--schema", schema.path, "--strict"] + endpoints + [main.path])
                #expect(strict.status == 1, "\(strict.output)")
                #expect(strict.output.contains("ListenPrt"), "\(strict.output)")
                let warned = try envctl(["publish", "--schema", schema.path] + endpoints + [main.path])
                #expect(warned.status == 0, "\(warned.output)")
                #expect(
                    warned.output.contains("warning: ") && warned.output.contains("did you mean 'ListenPort'"),
                    "\(warned.output)")
                #expect(try await fleet.writer.range(prefix: fleet.prefix).0.count == 1)
            }
        }
    }
#endif
