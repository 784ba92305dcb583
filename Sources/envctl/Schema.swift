import ArgumentParser
import Environments
import EnvironmentsControl
import Foundation

struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the settings a running daemon declares, as a JSON Schema (draft 2020-12) document.",
        discussion: """
            The schema describes the effective configuration as one nested object (envctl show --json's \
            values): each declared key's type, default, bounds, description, and annotations of our own \
            for what JSON Schema has no word for: x-secret, x-restart-only, x-former-names, x-required-in. \
            It holds no values. Save it where the application's package installs it \
            (/usr/share/<app-name>/schema.json), or anywhere: envctl check --schema FILE and envctl explain \
            --schema FILE read it to check files without the application or its daemon.
            """)

    @OptionGroup var location: LocationOptions

    func run() throws {
        try reportingFailures {
            guard case .daemon(let client) = try location.target(requireDaemon: true) else {
                throw Failure("no daemon to ask: pass --pid, --app-name or --socket")
            }
            let reply = try client.schema()
            if !reply.declared {
                printError("the daemon declares no settings: the schema has no properties")
            }
            print(reply.schema)
        }
    }
}

extension VarlinkClient {
    /// The daemon's `Schema` answer.
    func schema() throws -> SchemaReply {
        let reply = try ask(ControlInterface.Method.schema)
        guard let schema = try? JSONValue.record(SchemaReply.self, from: reply) else {
            throw Failure("the daemon's answer cannot be read")
        }
        return schema
    }
}
