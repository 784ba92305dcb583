/// Where the control socket is and the limits that keep any client from hurting the daemon.
///
/// The socket speaks varlink (interface `io.swiftenvironments.Configuration`, plus
/// `org.varlink.service`), so `envctl` and systemd's `varlinkctl` can ask a running daemon
/// what it runs with, check a configuration and reload it.
///
/// Root and the daemon's own user are *privileged* peers (`SO_PEERCRED`); everyone else is
/// held to per-user limits and can never take the connections kept for privileged peers, so
/// that no other local user can keep `envctl reload` (and so `systemctl reload`) from the daemon.
/// The limits (sizes, connections, timeouts) are fixed; the article <doc:ControlSocket> lists
/// them.
public struct ControlSocketConfiguration: Sendable {
    /// Serve the control socket: ``disabled`` turns it off.
    package var isEnabled: Bool = true
    /// The socket's path, given to ``init(path:)``; `nil` for the default.
    package var path: String?
    /// The largest call accepted from an unprivileged peer, in bytes; a larger one is answered
    /// with an error and the connection closed.
    package var maximumMessageSize: Int = 64 << 10
    /// The largest call accepted from root or the daemon's own user: room for a `Check`
    /// candidate at the per-file cap (16 MiB), JSON-escaped.
    package var maximumPrivilegedMessageSize: Int = 48 << 20
    /// How many clients may be connected at once; more are answered `TooManyConnections` and
    /// closed as they connect.
    package var maximumConnections: Int = 32
    /// Of ``maximumConnections``, how many only root and the daemon's own user may take: other
    /// users together never hold more than the rest.
    package var reservedPrivilegedConnections: Int = 8
    /// How many connections one unprivileged user (uid) may hold at once.
    package var maximumConnectionsPerUser: Int = 4
    /// A connection is closed once this long has passed since its last complete call, or the
    /// last reply it read whole (a call in progress, such as a reload, does not count): bytes
    /// that do not complete a call do not keep it open.
    package var idleTimeout: Duration = .seconds(30)
    /// A call must arrive whole within this long of its first byte; else it is answered with an
    /// error and the connection closed.
    package var callTimeout: Duration = .seconds(10)
    /// `Describe` without varlink's `more`: an answer larger than this is the error
    /// `org.varlink.service.ExpectedMore` (envctl, and `varlinkctl call --more`, ask for it in parts).
    package var maximumUnpagedReplySize: Int = 1 << 20
    /// `Describe` with `more`: the size at which one part is cut (a larger single setting goes alone).
    package var describePartSize: Int = 64 << 10
    /// Warnings about misbehaving clients: at most this many in each ``clientWarningInterval``;
    /// the others are counted, and the count logged once the interval is over.
    package var clientWarningBurst: Int = 5
    /// See ``clientWarningBurst``.
    package var clientWarningInterval: Duration = .seconds(10)

    /// The default configuration, what `EnvironmentService.Configuration` starts with: the
    /// socket is `configuration.varlink` in `$RUNTIME_DIRECTORY` (the unit's
    /// `RuntimeDirectory=`), else in `/run/<application>/` for root or
    /// `$XDG_RUNTIME_DIR/<application>/` for other users.
    package init() {}

    /// A configuration with the socket at `path`.
    public init(path: String) {
        self.path = path
    }

    /// No control socket.
    public static var disabled: ControlSocketConfiguration {
        var configuration = ControlSocketConfiguration()
        configuration.isEnabled = false
        return configuration
    }
}
