/// What started a reload.
package enum ReloadTrigger: String, Sendable, Hashable {
    /// `SIGHUP`: `systemctl reload`, `kill -HUP`, or `envctl reload`.
    case signal
    /// A configuration file or drop-in changed on disk.
    case fileChange = "file-change"
    /// The application called ``ConfigurationReloader/reload(trigger:)`` itself.
    case api
    /// The fleet configuration in etcd changed (`EnvironmentsEtcd`).
    case etcd
}
