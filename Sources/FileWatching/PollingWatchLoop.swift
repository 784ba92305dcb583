import Logging

/// The portable side of ``FileWatcher``: compares fingerprints of the configured paths at a
/// fixed interval. Used where inotify is not available.
struct PollingWatchLoop: Sendable {
    /// What to watch and how to coalesce.
    let configuration: WatchConfiguration
    /// How often to look.
    let interval: Duration
    /// Where to log.
    let logger: Logger

    /// Polls until the calling task is cancelled.
    func run(
        onReady: @Sendable () async -> Void,
        onChange: @Sendable (FileChangeBatch) async -> Void
    ) async {
        let clock = ContinuousClock()
        var baseline = snapshot()
        logger.debug(
            "Polling for file changes",
            metadata: ["paths": "\(configuration.allPaths.sorted())", "interval": "\(interval)"])
        await onReady()
        while true {
            do { try await Task.sleep(for: interval) } catch { return }
            var current = snapshot()
            var changed = differences(baseline, current)
            guard !changed.isEmpty else { continue }
            let start = clock.now
            var polls = 1
            while clock.now - start < configuration.maximumDelay {
                do { try await Task.sleep(for: configuration.debounce) } catch { return }
                let next = snapshot()
                let more = differences(current, next)
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

    private func snapshot() -> [String: FileFingerprint] {
        var result: [String: FileFingerprint] = [:]
        for file in configuration.files {
            result[file.configured] = FileFingerprint(path: file.absolute, listing: false)
        }
        for directory in configuration.directories {
            result[directory.configured] = FileFingerprint(path: directory.absolute, listing: true)
        }
        return result
    }

    private func differences(
        _ old: [String: FileFingerprint], _ new: [String: FileFingerprint]
    ) -> Set<String> {
        Set(new.keys.filter { old[$0] != new[$0] })
    }
}
