import Foundation

/// The systemd service unit a process runs in, read from its control group.
package enum ServiceUnit {
    /// The `.service` unit process `pid` runs in (`/proc/PID/cgroup`: cgroup v2's
    /// `0::/system.slice/NAME.service`, or v1's `1:name=systemd:/...`, a control process's
    /// `.../NAME.service/control` too); `nil` outside one, or when the process is gone.
    package static func ofProcess(_ pid: Int32) -> String? {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else {
            return nil
        }
        for line in text.split(separator: "\n") {
            guard let path = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).last
            else { continue }
            if let unit = path.split(separator: "/").last(where: { $0.hasSuffix(".service") }) {
                return String(unit)
            }
        }
        return nil
    }
}
