/// The journal `MESSAGE_ID`s of configuration events, documented in the journal catalog
/// `systemd/environments.catalog`.
///
/// ```sh
/// journalctl -u example-daemon MESSAGE_ID=952e4cbc030a4670aea6c53a74365a46 -o verbose
/// ```
package enum ConfigurationMessageID {
    /// A configuration was applied, at start or by a reload. The entry carries
    /// `CONFIG_ENVIRONMENT`, `CONFIG_GENERATION`, `CONFIG_SOURCE_FILE` (repeated),
    /// `CONFIG_SETTING=Key=value` (repeated, secrets redacted), `CONFIG_SETTING_SOURCE=Key=source`
    /// (repeated), `CONFIG_TRIGGER` (`start`, `signal`, `file`, `control`, `fleet`),
    /// `CONFIG_CALLER_UID` and `CONFIG_FLEET_REVISION` where they apply and, after a reload,
    /// `CONFIG_CHANGED_KEY` (repeated) and `CONFIG_PREVIOUS_SETTING=Key=value` (repeated: the
    /// changed keys' values before, for those that were set).
    package static let applied = "952e4cbc030a4670aea6c53a74365a46"
    /// A reload was rejected; the last good configuration stays. The entry carries
    /// `CONFIG_ERROR`, `CONFIG_ERROR_CODE`, `CONFIG_TRIGGER`, and `CONFIG_FILE`, `CONFIG_LINE`,
    /// `CONFIG_KEY`, `CONFIG_CALLER_UID` and `CONFIG_FLEET_REVISION` where they apply.
    package static let rejected = "c7876320c0e5489388c8c976a77710ce"
    /// A reload found nothing to change. The entry carries `CONFIG_GENERATION`, `CONFIG_TRIGGER`,
    /// and `CONFIG_CALLER_UID` and `CONFIG_FLEET_REVISION` where they apply.
    package static let unchanged = "d59a685f44d34d0db764aacb7648fe98"
    /// Restart-only keys changed; their old values stay until a restart. The entry carries
    /// `CONFIG_PENDING_RESTART=Key=new value` (repeated, secrets redacted).
    package static let pendingRestart = "d27bae4e53404fe1b9deceadf1821d7e"
    /// The configuration in effect loads but should be fixed (a key written twice in one
    /// dictionary): one entry per warning, after the load or reload that applied it. The
    /// entry carries `CONFIG_WARNING_CODE` (`duplicateKey`), and `CONFIG_FILE`, `CONFIG_LINE`
    /// and `CONFIG_KEY` where they apply.
    package static let warning = "a8318aaf953f4a6db5068065eea0b110"
}
