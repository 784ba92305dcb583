import Environments

/// The `STATUS=` texts sent to systemd, which `systemctl status` shows.
enum SystemdStatus {
    /// `Environment <name>[, instance <name>], configuration generation <n>`, then each note
    /// (by topic: how files are watched, where the fleet configuration comes from), in the
    /// order of their topics.
    static func text(of snapshot: EnvironmentSnapshot, notes: [String: String]) -> String {
        var text =
            "Environment \(snapshot.environmentName)" + (snapshot.instanceName.map { ", instance \($0)" } ?? "")
            + ", configuration generation \(snapshot.generation)"
        for topic in notes.keys.sorted() { text += "; " + notes[topic]! }
        return text
    }

    /// After `record`: the configuration in use and the notes and, after a rejected reload, why.
    static func text(after record: ReloadRecord, notes: [String: String]) -> String {
        var text = text(of: record.configuration, notes: notes)
        if let error = record.error { text += "; reload rejected: \(error)" }
        return text
    }

    /// While a reload that `trigger` started is being built.
    static func reloading(_ trigger: ReloadTrigger) -> String {
        "Reloading configuration (\(trigger.rawValue))"
    }
}
