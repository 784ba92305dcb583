#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// The unit a control call's caller runs in: its own control group's, when this process
    /// may read it; else, for a caller that runs as this process's own user (not root), this
    /// process's unit. A unit's `ExecReload=` needs the second: under `PrivateUsers=` each of
    /// the unit's processes has a user namespace of its own, and `ProtectProc=invisible` hides
    /// one from another; with `DynamicUser=` only the unit's own processes run as its user.
    package static func ofCaller(_ pid: Int32, uid: UInt32) -> String? {
        if let unit = ofProcess(pid) { return unit }
        guard uid == geteuid(), uid != 0 else { return nil }
        return ofProcess(getpid())
    }
}
