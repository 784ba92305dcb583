package import EnvironmentsDaemon
import SystemdSupport

extension EnvironmentService.Configuration {
    /// A service run inside a test's process: no systemd notifications, watchdog or state file,
    /// log levels left alone, log lines on standard error; the control socket at
    /// `controlSocket` (`nil`: none) and files watched only when asked.
    package static func inTest(controlSocket: String?, watchFiles: Bool = false) -> Self {
        var configuration = Self()
        configuration.watchFiles = watchFiles
        configuration.stateFile = nil
        configuration.watchdog = false
        configuration.systemdNotifications = false
        configuration.levelControl = nil
        configuration.journalOutput = .stderrWithPriorityPrefix
        configuration.controlSocket = controlSocket.map(ControlSocketConfiguration.init(path:)) ?? .disabled
        return configuration
    }
}
