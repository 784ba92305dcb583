extension EnvironmentService {
    /// When ``EnvironmentService`` tells systemd `READY=1`, the moment `systemctl start`
    /// returns and units ordered after this one start.
    ///
    /// A daemon without a port of its own is ready when its configuration is: keep
    /// ``whenConfigured``. A server is ready when it accepts connections: choose
    /// ``whenApplicationServes`` and call ``EnvironmentService/applicationIsServing()`` once
    /// it listens. Either way, `READY=1` never goes out before the configuration is loaded
    /// and its files are watched.
    public enum Readiness: Sendable, Hashable {
        /// `READY=1` once the configuration is loaded and its files are watched: the
        /// behaviour of a daemon that serves nothing but its configuration, and the default.
        case whenConfigured
        /// `READY=1` once the configuration is watched and the application called
        /// ``EnvironmentService/applicationIsServing()``, whichever comes last. A start whose
        /// server cannot bind never says `READY=1`.
        case whenApplicationServes
    }
}
