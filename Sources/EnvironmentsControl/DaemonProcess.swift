import Environments

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

/// A process as a daemon's state file records it, so that a reader can tell whether the daemon
/// that wrote the file still runs: its id, when it started (a reused id starts later), and the
/// boot it ran in (ids start over at every boot).
package struct DaemonProcess: Sendable, Hashable {
    /// The process id.
    package var pid: Int32
    /// When it started, in clock ticks since boot (`/proc/PID/stat`, field 22); `nil` if unknown.
    package var startTime: UInt64?
    /// `/proc/sys/kernel/random/boot_id` when it ran; `nil` if unknown.
    package var bootID: String?

    /// The process `pid`, started at `startTime` in the boot `bootID`.
    package init(pid: Int32, startTime: UInt64?, bootID: String?) {
        self.pid = pid
        self.startTime = startTime
        self.bootID = bootID
    }

    /// This process.
    package static var current: DaemonProcess {
        let pid = getpid()
        return DaemonProcess(pid: pid, startTime: startTime(of: pid), bootID: currentBootID)
    }

    /// Whether the process still runs: same boot, and a process with its id that started when
    /// it did. Without a start time or boot id recorded, whether a process has its id.
    package var isRunning: Bool {
        if let bootID, let now = Self.currentBootID, now != bootID { return false }
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        if let startTime, let now = Self.startTime(of: pid), now != startTime { return false }
        return true
    }

    /// The current boot's id, or `nil` where there is none (not Linux).
    package static var currentBootID: String? {
        guard let id = KernelFile.line("/proc/sys/kernel/random/boot_id") else { return nil }
        return id.isEmpty ? nil : id
    }

    /// Field 22 of `/proc/PID/stat`: after the command name, which ends at the last `)` and
    /// may hold spaces, it is the 20th field.
    package static func startTime(of pid: Int32) -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    /// What a daemon's state file in `directory` (`environment-state.json`) says about a
    /// daemon that is gone, for a message: `nil` when there is no such file, or its daemon runs.
    package static func staleStateNote(inDirectory directory: String) -> String? {
        struct Recorded: Decodable {
            var pid: Int32
            var processStartTime: UInt64?
            var bootID: String?
        }
        let path = PathNames.join(directory, stateFileName)
        guard let data = FileManager.default.contents(atPath: path),
            let recorded = try? JSONDecoder().decode(Recorded.self, from: data)
        else { return nil }
        let process = DaemonProcess(pid: recorded.pid, startTime: recorded.processStartTime, bootID: recorded.bootID)
        guard !process.isRunning else { return nil }
        return "\(path) is stale: process \(recorded.pid), which wrote it, is gone (a crash leaves it behind)"
    }

    /// The state file's name in the runtime directory.
    package static let stateFileName = "environment-state.json"
}
