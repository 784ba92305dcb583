import Environments
import EnvironmentsControl
import JSONText
import SystemdSupport
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `io.systemd.service`, the interface systemd's own daemons serve on their varlink sockets,
/// so that `varlinkctl call SOCKET io.systemd.service.SetLogLevel '{"level":7}'` works for a
/// daemon built with Environments as it does for `systemd-journald`.
///
/// `Ping` is for anyone who can connect. `Reload`, `SetLogLevel` and `GetEnvironment` are for
/// root and the daemon's own user (`SO_PEERCRED`); anyone else gets
/// `org.varlink.service.PermissionDenied`, as from systemd.
extension ControlHandler {
    /// The interface's name.
    static let systemdServiceInterface = "io.systemd.service"

    /// The interface description, as systemd 257 defines it.
    static let systemdServiceDescription = """
        # An interface to control basic properties of systemd services.
        interface io.systemd.service

        # Checks if the service is running.
        method Ping() -> ()

        # Reloads configuration files.
        method Reload() -> ()

        # Sets the maximum log level.
        method SetLogLevel(
          # The maximum log level, using BSD syslog log level integers.
          level: ?int
        ) -> ()

        # Get current environment block.
        method GetEnvironment() -> (
          environment: []string
        )
        """

    /// Answers a call to `io.systemd.service`.
    func handleSystemdService(_ call: VarlinkCall, from peer: PeerCredentials) async -> VarlinkReply {
        let parameters = call.parameters ?? [:]
        let method = call.method.dropFirst(Self.systemdServiceInterface.count + 1)
        switch method {
        case "Ping":
            guard parameters.isEmpty else { return Self.invalidParameter(parameters.keys.sorted()[0]) }
            return VarlinkReply(parameters: [:])
        case "Reload":
            guard parameters.isEmpty else { return Self.invalidParameter(parameters.keys.sorted()[0]) }
            if let denied = systemdDeny(peer) { return denied }
            let report = await reloader.reload(
                trigger: .control, callerUID: peer.uid, callerUnit: ServiceUnit.ofCaller(peer.pid, uid: peer.uid))
            guard report.verdict == .rejected else { return VarlinkReply(parameters: [:]) }
            return VarlinkReply(
                parameters: ["verdict": .object(report.verdictJSON)],
                error: ControlInterface.Error.reloadRejected.qualifiedName)
        case "SetLogLevel":
            if let extra = parameters.keys.sorted().first(where: { $0 != "level" }) {
                return Self.invalidParameter(extra)
            }
            if let denied = systemdDeny(peer) { return denied }
            guard reloader.controlsLogLevel else {
                return .error(VarlinkServiceError.methodNotImplemented, ["method": .string(call.method)])
            }
            switch parameters["level"] {
            case nil, .null?:
                await reloader.overrideLogLevel(nil, uid: peer.uid)
            case let value?:
                guard let level = value.intValue, let override = LogLevelOverride(syslogLevel: level, uid: peer.uid)
                else { return Self.invalidParameter("level") }
                await reloader.overrideLogLevel(override, uid: peer.uid)
            }
            return VarlinkReply(parameters: [:])
        case "GetEnvironment":
            guard parameters.isEmpty else { return Self.invalidParameter(parameters.keys.sorted()[0]) }
            // A variable may hold a secret: the daemon's own user and root only.
            if let denied = systemdDeny(peer) { return denied }
            let variables = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
                .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            return VarlinkReply(parameters: ["environment": .array(variables.map(JSONValue.string))])
        default:
            return .error(VarlinkServiceError.methodNotFound, ["method": .string(call.method)])
        }
    }

    /// `org.varlink.service.PermissionDenied` for a peer that is neither root nor the daemon's
    /// user, as systemd's daemons answer; `nil` when the peer may go ahead.
    private func systemdDeny(_ peer: PeerCredentials) -> VarlinkReply? {
        peer.isPrivileged ? nil : .error(VarlinkServiceError.permissionDenied)
    }

    /// `org.varlink.service.InvalidParameter`, naming the parameter.
    static func invalidParameter(_ name: String) -> VarlinkReply {
        .error(VarlinkServiceError.invalidParameter, ["parameter": .string(name)])
    }
}
