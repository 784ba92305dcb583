/// Where the control socket is and the limits that keep any client from hurting the daemon.
///
/// The socket speaks varlink (interface `io.swiftenvironments.Configuration`, plus
/// `org.varlink.service`), so `envctl` and systemd's `varlinkctl` can ask a running daemon
/// what it runs with, check a configuration and reload it.
public struct ControlSocketConfiguration: Sendable {
    /// Serve the control socket.
    public var isEnabled: Bool = true
    /// The socket's path; `nil` for the default: `configuration.varlink` in
    /// `$RUNTIME_DIRECTORY` (the unit's `RuntimeDirectory=`), else in `/run/<application>/`
    /// for root or `$XDG_RUNTIME_DIR/<application>/` for other users.
    public var path: String?
    /// The largest call accepted, in bytes; a larger one is answered with an error and the
    /// connection closed.
    public var maximumMessageSize: Int = 64 << 10
    /// How many clients may be connected at once; more are closed as they connect.
    public var maximumConnections: Int = 32
    /// A connection with no complete call for this long is closed (a call in progress, such
    /// as a reload, does not count as idle).
    public var idleTimeout: Duration = .seconds(30)
    /// Replies not yet read by a client beyond this many bytes close its connection.
    public var maximumUnsentBytes: Int = 16 << 20

    /// The default configuration.
    public init() {}

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
