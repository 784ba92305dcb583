/// The errors of `org.varlink.service`, which any varlink service may answer with.
///
/// See <https://varlink.org/Service>.
package enum VarlinkServiceError: String, CaseIterable, Sendable {
    case interfaceNotFound, methodNotFound, methodNotImplemented, invalidParameter, permissionDenied, expectedMore

    /// The name a reply carries, for example `org.varlink.service.InvalidParameter`.
    package var qualifiedName: String { VarlinkName.qualified(rawValue, in: "org.varlink.service") }
}

/// Names of varlink interface members.
package enum VarlinkName {
    /// `interface.Member` for the Swift name of a member (`invalidParameter` in
    /// `org.varlink.service`: `org.varlink.service.InvalidParameter`): varlink spells methods
    /// and errors in upper camel case.
    package static func qualified(_ member: String, in interface: String) -> String {
        "\(interface).\(member.prefix(1).uppercased())\(member.dropFirst())"
    }
}
