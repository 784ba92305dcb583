import EnvironmentsControl
import EnvironmentsEditing
import JSONText
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension VarlinkClient {
    /// The daemon's `Describe`, asked for in parts (varlink's `more`) so that a configuration of
    /// any size comes through, each part within the client's message limit; an error reply
    /// becomes a ``Failure`` that says what the daemon said.
    func describe(showSecrets: Bool = false) throws -> DescribeReply {
        var assembled: DescribeReply?
        let failure: VarlinkReply?
        do {
            failure = try callWithMore(
                VarlinkCall(
                    method: ControlInterface.Method.describe.qualifiedName,
                    parameters: showSecrets ? ["showSecrets": .bool(true)] : [:]),
                decoding: DescribeReply.self
            ) { part throws(VarlinkClientError) in
                if assembled == nil {
                    assembled = part
                } else {
                    try assembled?.append(part: part)
                }
            }
        } catch {
            throw Failure("\(error)")
        }
        if let failure, let error = failure.error { throw Failure(Self.explain(error, failure.parameters ?? [:])) }
        guard let assembled else { throw Failure("the daemon sent no description") }
        return assembled
    }
}
