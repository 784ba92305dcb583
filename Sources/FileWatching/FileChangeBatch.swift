/// The configured paths affected by one coalesced burst of file system changes.
///
/// ``FileWatcher`` hands one batch to its `onChange` callback per burst. Paths are spelled
/// exactly as they were given to ``FileWatcher/init(files:directories:debounce:settle:openWriteLimit:fallbackPollingInterval:entryFilter:logger:)``.
package struct FileChangeBatch: Sendable, Hashable, CustomStringConvertible {
    /// The configured files and directories that were (or may have been) changed.
    package var paths: Set<String>
    /// `true` if change events were lost, for example because the kernel's inotify queue
    /// overflowed. ``paths`` then holds every configured path: reload everything.
    package var overflowed: Bool
    /// How many raw file system events were coalesced into this batch; for diagnostics.
    package var eventCount: Int
    /// `true` if a mount on, above or below a watched directory changed (an overlay that
    /// `systemd-confext` merged on `/etc`, refreshed or unmerged; anything mounted over a
    /// configuration directory). ``paths`` then holds every configured path: what they show
    /// may have changed without a single file event.
    package var mountsChanged: Bool

    /// Creates a batch.
    ///
    /// - Parameters:
    ///   - paths: The affected configured paths.
    ///   - overflowed: Whether events were lost.
    ///   - eventCount: How many raw events the batch stands for.
    ///   - mountsChanged: Whether a mount that matters changed.
    package init(paths: Set<String> = [], overflowed: Bool = false, eventCount: Int = 0, mountsChanged: Bool = false) {
        self.paths = paths
        self.overflowed = overflowed
        self.eventCount = eventCount
        self.mountsChanged = mountsChanged
    }

    /// `true` if the batch names no path and reports no overflow.
    package var isEmpty: Bool { paths.isEmpty && !overflowed }

    /// Adds the paths, the flags and the event count of `other` to this batch.
    ///
    /// - Parameter other: The batch to fold into this one.
    package mutating func merge(_ other: FileChangeBatch) {
        paths.formUnion(other.paths)
        overflowed = overflowed || other.overflowed
        eventCount += other.eventCount
        mountsChanged = mountsChanged || other.mountsChanged
    }

    /// The sorted paths, the flags and the event count, for logs.
    package var description: String {
        let list = paths.sorted().joined(separator: ", ")
        return "[\(list)]\(overflowed ? " (overflowed)" : "")\(mountsChanged ? " (mounts changed)" : "")"
            + " from \(eventCount) event(s)"
    }
}
