import Logging

/// The portable side of ``FileWatcher``: compares fingerprints of the configured paths at a
/// fixed interval. Used where inotify is not available, and on Linux while the kernel's
/// inotify limits leave none for this process.
struct PollingWatchLoop: Sendable {
    /// What to watch and how to coalesce.
    let configuration: WatchConfiguration
    /// How often to look.
    let interval: Duration
    /// Where to log.
    let logger: Logger

    /// Polls until the calling task is cancelled, or until `shouldStop` (asked every
    /// `stopCheckInterval`) returns `true`.
    ///
    /// - Returns: The fingerprints as last reported (or as first seen): whoever takes over
    ///   compares against them, so that no change falls between the two.
    @discardableResult
    func run(
        onReady: @Sendable () async -> Void,
        onChange: @Sendable (FileChangeBatch) async -> Void,
        stopCheckInterval: Duration = .seconds(10),
        shouldStop: @Sendable () -> Bool = { false }
    ) async -> [String: FileFingerprint] {
        let clock = ContinuousClock()
        var baseline = FileFingerprint.all(of: configuration)
        logger.debug(
            "Polling for file changes",
            metadata: ["paths": "\(configuration.allPaths.sorted())", "interval": "\(interval)"])
        await onReady()
        var lastStopCheck = clock.now
        while true {
            do { try await Task.sleep(for: interval) } catch { return baseline }
            if clock.now - lastStopCheck >= stopCheckInterval {
                lastStopCheck = clock.now
                if shouldStop() { return baseline }
            }
            var current = FileFingerprint.all(of: configuration)
            var changed = FileFingerprint.changedPaths(from: baseline, to: current)
            guard !changed.isEmpty else { continue }
            let start = clock.now
            var polls = 1
            while clock.now - start < configuration.maximumDelay {
                do { try await Task.sleep(for: configuration.debounce) } catch { return baseline }
                let next = FileFingerprint.all(of: configuration)
                let more = FileFingerprint.changedPaths(from: current, to: next)
                current = next
                polls += 1
                if more.isEmpty { break }
                changed.formUnion(more)
            }
            baseline = current
            let batch = FileChangeBatch(paths: changed, eventCount: polls)
            logger.debug("Files changed", metadata: ["batch": "\(batch)"])
            await onChange(batch)
        }
    }
}
