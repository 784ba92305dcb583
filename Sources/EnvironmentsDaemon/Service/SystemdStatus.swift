package import Environments

/// The `STATUS=` texts sent to systemd, which `systemctl status` shows.
package enum SystemdStatus {
    /// `Environment <name>[, instance <name>], configuration generation <n>`, then each note
    /// (by topic: how files are watched, where the fleet configuration comes from), in the
    /// order of their topics.
    static func text(of snapshot: EnvironmentSnapshot, notes: [String: String]) -> String {
        text(
            environment: snapshot.environmentName, instance: snapshot.instanceName, generation: snapshot.generation,
            notes: notes)
    }

    /// After `report`: the configuration in use (its environment, instance and generation) and
    /// the notes and, after a rejected reload, why. The report's other fields are not shown:
    /// `ReloadReportSurfaceTests` lists them.
    package static func text(after report: ReloadReport, notes: [String: String]) -> String {
        var text = text(
            environment: report.environment, instance: report.instance, generation: report.generation, notes: notes)
        if let error = report.error { text += "; reload rejected: \(error)" }
        return text
    }

    private static func text(environment: String, instance: String?, generation: UInt64, notes: [String: String])
        -> String
    {
        var text =
            "Environment \(environment)" + (instance.map { ", instance \($0)" } ?? "")
            + ", configuration generation \(generation)"
        for topic in notes.keys.sorted() { text += "; " + notes[topic]! }
        return text
    }

    /// While a reload that `trigger` started is being built.
    static func reloading(_ trigger: ReloadTrigger) -> String {
        "Reloading configuration (\(trigger.rawValue))"
    }
}
