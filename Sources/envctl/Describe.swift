import EnvironmentsControl
import Foundation

extension VarlinkClient {
    /// The daemon's `Describe`, asked for in parts (varlink's `more`) so that a configuration of
    /// any size comes through, each part within the client's message limit; an error reply
    /// becomes a ``Failure`` that says what the daemon said.
    func describe(showSecrets: Bool = false) throws -> DescribeReply {
        var assembled: DescribeReply?
        var failure: Failure?
        do {
            try callWithMore(
                VarlinkCall(
                    method: ControlInterface.Method.describe,
                    parameters: showSecrets ? ["showSecrets": .bool(true)] : [:])
            ) { reply throws(VarlinkClientError) in
                if let error = reply.error {
                    failure = Failure(Self.explain(error, reply.parameters ?? [:]))
                    return
                }
                let part: DescribeReply
                do {
                    part = try JSONValue.record(DescribeReply.self, from: reply.parameters)
                } catch {
                    throw VarlinkClientError("the daemon's description cannot be read: \(error)")
                }
                if assembled == nil {
                    assembled = part
                } else {
                    try assembled?.append(part: part)
                }
            }
        } catch {
            throw Failure("\(error)")
        }
        if let failure { throw failure }
        guard let assembled else { throw Failure("the daemon sent no description") }
        return assembled
    }
}
