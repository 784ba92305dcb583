import ArgumentParser
import Environments
import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

struct Schema: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the settings a running daemon declares, as a JSON Schema (draft 2020-12) document.",
        discussion: """
            The schema describes the effective configuration as one nested object (envctl show --json's \
            values): each declared key's type, default, bounds, description, and annotations of our own \
            for what JSON Schema has no word for: x-secret, x-restart-only, x-former-names, x-required-in. \
            It holds no values. Save it where the application's package installs it \
            (/usr/share/<app-name>/schema.json), or anywhere: envctl check --schema FILE and envctl explain \
            --schema FILE read it to check files without the application or its daemon. With --app-name \
            and no daemon of it running, envctl prints that installed file instead, and says so on stderr.
            """)

    @OptionGroup var location: LocationOptions

    func run() throws {
        let target: LocationOptions.Target
        do {
            target = try location.target(requireDaemon: true)
        } catch let failure as Failure {
            // No daemon of --app-name runs: the schema its package installed, if any.
            guard location.pid == nil, location.socket == nil, let name = location.applicationName else {
                throw failure
            }
            let installed = SchemaOptions.installedPath(name)
            guard let data = FileManager.default.contents(atPath: installed) else {
                throw Failure("\(failure.description); and no installed schema at \(installed)")
            }
            _ = try SchemaOptions.read(installed)
            printError("no running daemon of \(name): printing the schema its package installed, \(installed)")
            writeToStandardOutput(data)
            if data.last != UInt8(ascii: "\n") { print() }
            return
        }
        guard case .daemon(let client) = target else {
            throw Failure("no daemon to ask: pass --pid, --app-name or --socket")
        }
        let reply = try client.schema()
        if !reply.declared {
            printError("the daemon declares no settings: the schema has no properties")
        }
        print(reply.schema)
    }
}

extension VarlinkClient {
    /// The daemon's `Schema` answer.
    func schema() throws -> SchemaReply {
        // Non-nil: only `ifServed` makes a missing method nil.
        try schema(ifServed: false)!
    }

    /// The daemon's `Schema` answer; with `ifServed`, `nil` from a daemon that predates
    /// `Schema` (it answers that the method does not exist).
    func schema(ifServed: Bool) throws -> SchemaReply? {
        let reply: VarlinkReply
        do {
            reply = try call(VarlinkCall(method: ControlInterface.Method.schema.qualifiedName, parameters: [:]))
        } catch {
            throw Failure("\(error)")
        }
        if ifServed, let error = reply.error, Self.methodMissing.contains(error) { return nil }
        if let error = reply.error { throw Failure(Self.explain(error, reply.parameters ?? [:])) }
        guard let schema = try? JSONValue.record(SchemaReply.self, from: reply.parameters ?? [:]) else {
            throw Failure("the daemon's answer cannot be read")
        }
        return schema
    }

    /// The errors of a daemon that has no such method.
    static let methodMissing: Set<String> = [
        "org.varlink.service.MethodNotFound", "org.varlink.service.MethodNotImplemented",
    ]
}
