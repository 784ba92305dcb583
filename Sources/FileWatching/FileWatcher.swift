package import Logging
import ThreadBridge

#if canImport(FoundationEssentials)
    import FoundationEssentials
#elseif os(Linux)
    import Foundation
#endif

/// Watches a set of configuration files and directories, and reports each burst of changes
/// once.
///
/// On Linux it uses inotify on a dedicated thread; elsewhere it polls every half second.
/// Every common way of saving a file is noticed: writing in place, writing a temporary file
/// and renaming it over the original, renaming the original away and writing a new one,
/// deleting and recreating it, retargeting a symbolic link, and the `..data` symbolic link
/// swap of Kubernetes ConfigMap volumes. Paths that do not exist yet are watched for their
/// creation.
///
/// Events are coalesced into bursts, and how long a burst is held back depends on its last
/// event. Closing a file that was opened for writing, and renaming a file into place, end a
/// save: the file is then complete, so a burst that ends with one of them is reported after a
/// short ``settle`` (2 ms by default) and a reload follows the save within milliseconds. Every
/// other event (creating, modifying or deleting a file, renaming it away, changing its
/// attributes) may be part of a save still under way, such as a file still being written, so a
/// burst that ends with one waits for the full ``debounce`` of quiet: a half-written file is
/// not reported unless its writer pauses for longer than that. A save whose steps are further
/// apart than the settle, such as a temporary file closed in a watched directory and renamed a
/// moment later, may be reported twice, each time in a complete state. A file still open for
/// writing holds its burst back until it is closed (see ``openWriteLimit``). The polling
/// fallback uses only ``debounce``.
///
/// When the kernel's inotify limits leave none for this process (`fs.inotify.max_user_instances`
/// is 128 per user by default, and busy hosts run out; `fs.inotify.max_user_watches`), the
/// watcher polls every ``fallbackPollingInterval`` instead, tries inotify again every ten
/// seconds, and tells `onModeChange` each time it switches.
///
/// ```swift
/// let watcher = FileWatcher(
///   files: ["/etc/app/Environments.plist"],
///   directories: ["/etc/app/Environments.plist.d"])
/// try await watcher.run { batch in
///   await reload(batch.paths)
/// }
/// ```
package final class FileWatcher: Sendable {
    /// How the watcher currently learns of changes.
    package enum Mode: Sendable, Equatable {
        /// inotify: changes are seen as they happen.
        case inotify
        /// Polling at ``FileWatcher/fallbackPollingInterval``, because inotify is not available;
        /// `reason` says why (the kernel's error).
        case polling(reason: String)
    }

    /// How change detection works.
    enum Backend: Sendable, Hashable {
        /// inotify on Linux; polling every 500 ms elsewhere.
        case native
        /// Compare fingerprints of every path at this interval.
        case polling(interval: Duration)
    }

    /// The files being watched, as given.
    package let files: [String]
    /// The directories being watched, as given.
    package let directories: [String]
    /// The quiet time after which a burst of changes is reported when its last event may be
    /// part of a save still in progress.
    package let debounce: Duration
    /// The quiet time after which a burst of changes is reported when its last event completed
    /// a save (a file opened for writing was closed, or a file was renamed into place).
    ///
    /// Used as at most ``debounce``. The polling fallback does not use it.
    package let settle: Duration
    /// The longest a burst waits for a file that is still open for writing (its writer has
    /// written and not closed it yet); then the file is reported as it is.
    package let openWriteLimit: Duration
    /// How often paths are compared while inotify is not available.
    package let fallbackPollingInterval: Duration

    let configuration: WatchConfiguration
    let backend: Backend
    let logger: Logger

    /// Creates a watcher. Nothing is watched until ``run(onChange:)`` is called.
    ///
    /// - Parameters:
    ///   - files: Regular files to watch. They may be symbolic links and may not exist yet.
    ///     Relative paths are resolved against the current directory now.
    ///   - directories: Directories whose entries matter, such as a drop-in directory
    ///     `Environments.plist.d`. They may not exist yet. Adding, removing, renaming or
    ///     changing an entry, and creating or deleting the directory, are changes.
    ///   - debounce: The quiet time that ends a burst of changes whose last event may be part
    ///     of a save still in progress, such as a write to a file that is still open. A burst
    ///     that keeps going is reported after ten times this at the latest.
    ///   - settle: The quiet time that ends a burst of changes whose last event completed a
    ///     save: a file opened for writing was closed, or a file was renamed into place. Kept
    ///     short so that a reload follows a save quickly; it still lets the other half of a
    ///     rename or the next step of a tool arrive and join the burst. Used as at most
    ///     `debounce`.
    ///   - openWriteLimit: The longest a burst waits for a file still open for writing.
    ///   - fallbackPollingInterval: How often to compare paths while inotify is not available.
    ///   - entryFilter: Which entries of `directories` matter, by name (for example drop-ins
    ///     named `*.plist`); the others, such as an editor's swap file, are ignored. An entry
    ///     that passes and is a symbolic link is followed to its target.
    ///   - logger: Where to log, mostly at debug and trace level.
    package convenience init(
        files: [String], directories: [String], debounce: Duration = .milliseconds(50),
        settle: Duration = .milliseconds(2), openWriteLimit: Duration = .seconds(5),
        fallbackPollingInterval: Duration = .seconds(1),
        entryFilter: @escaping @Sendable (String) -> Bool = { _ in true },
        logger: Logger = Logger(label: "FileWatching")
    ) {
        self.init(
            files: files, directories: directories, debounce: debounce, settle: settle,
            openWriteLimit: openWriteLimit, fallbackPollingInterval: fallbackPollingInterval,
            entryFilter: entryFilter, logger: logger, backend: .native)
    }

    /// Creates a watcher with an explicit backend (tests use ``Backend/polling(interval:)``).
    ///
    /// - Parameters:
    ///   - files: Regular files to watch.
    ///   - directories: Directories whose entries matter.
    ///   - debounce: The quiet time after an event of a save that may still be in progress.
    ///   - settle: The quiet time after an event that completed a save.
    ///   - openWriteLimit: The longest a burst waits for a file still open for writing.
    ///   - fallbackPollingInterval: How often to compare paths while inotify is not available.
    ///   - entryFilter: Which entries of `directories` matter.
    ///   - logger: Where to log.
    ///   - backend: How to detect changes.
    init(
        files: [String], directories: [String], debounce: Duration,
        settle: Duration = .milliseconds(2), openWriteLimit: Duration = .seconds(5),
        fallbackPollingInterval: Duration = .seconds(1),
        entryFilter: @escaping @Sendable (String) -> Bool = { _ in true }, logger: Logger, backend: Backend
    ) {
        self.files = files
        self.directories = directories
        self.debounce = debounce
        self.settle = settle
        self.fallbackPollingInterval = fallbackPollingInterval
        self.logger = logger
        self.backend = backend
        self.configuration = WatchConfiguration(
            files: files, directories: directories, debounce: debounce, settle: settle,
            openWriteLimit: openWriteLimit, entryFilter: entryFilter)
        self.openWriteLimit = configuration.openWriteLimit
    }

    /// Watches until the calling task is cancelled.
    ///
    /// Calls `onChange` once per burst of changes, after ``settle`` of quiet if the burst
    /// ended by completing a save and after ``debounce`` of quiet otherwise, with the
    /// configured paths (spelled as in `files` and `directories`) that were affected. Calls
    /// are never concurrent; changes that happen while `onChange` runs are merged into the
    /// next call. Returns normally, with the inotify descriptor closed, once the task is
    /// cancelled.
    ///
    /// - Parameter onChange: Called with each batch of changes.
    /// - Throws: ``InotifyError`` if inotify fails while watching for a reason other than the
    ///   kernel's limits (for which the watcher polls instead).
    package func run(onChange: @escaping @Sendable (FileChangeBatch) async -> Void) async throws {
        try await run(onReady: {}, onChange: onChange)
    }

    /// Watches until the calling task is cancelled, telling `onReady` when watching has begun.
    ///
    /// Like ``run(onChange:)``. `onReady` is called once, before any `onChange`, as soon as
    /// the initial watches are in place (or polling has taken its first look): a change made
    /// after that is reported. Reading the configuration in `onReady` therefore leaves no
    /// window in which a change is missed. `onModeChange` is called when the watcher falls
    /// back to polling because the kernel's inotify limits are reached (before `onReady` if
    /// that happens at once) and when it returns to inotify; a change made while it switches
    /// is reported.
    ///
    /// - Parameters:
    ///   - onReady: Called once the initial watches are in place.
    ///   - onModeChange: Called with each switch between inotify and polling.
    ///   - onChange: Called with each batch of changes.
    /// - Throws: ``InotifyError`` if inotify fails while watching for a reason other than the
    ///   kernel's limits.
    package func run(
        onReady: @escaping @Sendable () async -> Void,
        onModeChange: @escaping @Sendable (Mode) async -> Void = { _ in },
        onChange: @escaping @Sendable (FileChangeBatch) async -> Void
    ) async throws {
        switch backend {
        case .polling(let interval):
            let loop = PollingWatchLoop(configuration: configuration, interval: interval, logger: logger)
            await loop.run(onReady: onReady, onChange: onChange)
        case .native:
            #if os(Linux)
                try await runNative(onReady: onReady, onModeChange: onModeChange, onChange: onChange)
            #else
                let loop = PollingWatchLoop(
                    configuration: configuration, interval: .milliseconds(500), logger: logger)
                await loop.run(onReady: onReady, onChange: onChange)
            #endif
        }
    }

    #if os(Linux)
        /// Whether `onReady` was called, across switches between inotify and polling.
        private final class Readiness: @unchecked Sendable {
            // Only touched by the task running `run`, one step after another.
            private(set) var done = false
            func once(_ onReady: @Sendable () async -> Void) async {
                guard !done else { return }
                done = true
                await onReady()
            }
        }

        /// inotify while the kernel grants it, polling while it does not.
        private func runNative(
            onReady: @escaping @Sendable () async -> Void,
            onModeChange: @escaping @Sendable (Mode) async -> Void,
            onChange: @escaping @Sendable (FileChangeBatch) async -> Void
        ) async throws {
            let readiness = Readiness()
            var baseline: [String: FileFingerprint]?
            while !Task.isCancelled {
                do {
                    let resumed = baseline != nil
                    try await runInotify(
                        baseline: baseline,
                        onReady: {
                            if resumed {
                                self.logger.info("Watching for file changes with inotify again")
                                await onModeChange(.inotify)
                            }
                            await readiness.once(onReady)
                        }, onChange: onChange)
                    return
                } catch let error as InotifyError where error.isResourceLimit {
                    logger.warning(
                        "inotify is not available; polling for file changes instead",
                        metadata: [
                            "error": "\(error)", "interval": "\(fallbackPollingInterval)",
                            "hint": "raise fs.inotify.max_user_instances or fs.inotify.max_user_watches (sysctl)",
                        ])
                    await onModeChange(.polling(reason: error.description))
                    if readiness.done {
                        // Events collected since the last batch went with the inotify instance.
                        await onChange(FileChangeBatch(paths: configuration.allPaths, overflowed: true))
                    }
                    let loop = PollingWatchLoop(
                        configuration: configuration, interval: fallbackPollingInterval, logger: logger)
                    let configuration = configuration
                    baseline = await loop.run(
                        onReady: { await readiness.once(onReady) }, onChange: onChange,
                        shouldStop: { Self.inotifyIsAvailable(for: configuration) })
                }
            }
        }

        /// Whether an inotify instance with every watch the configuration needs can be had now.
        private static func inotifyIsAvailable(for configuration: WatchConfiguration) -> Bool {
            guard let inotify = try? Inotify() else { return false }
            defer { inotify.close() }
            for directory in WatchPlan(configuration: configuration).directories {
                do {
                    _ = try inotify.addWatch(path: directory, mask: InotifyWatchLoop.directoryMask)
                } catch let error as InotifyError where error.isResourceLimit {
                    return false
                } catch {
                    // Vanished or forbidden: the watch loop handles that as usual.
                }
            }
            return true
        }
        /// Runs ``InotifyWatchLoop`` on its own thread and calls back from the calling task.
        private func runInotify(
            baseline: [String: FileFingerprint]?,
            onReady: @escaping @Sendable () async -> Void,
            onChange: @escaping @Sendable (FileChangeBatch) async -> Void
        ) async throws {
            let mailbox = BatchMailbox()
            let wakeup = try WakeupPipe()
            let configuration = configuration
            let logger = logger
            // The mailbox, not the thread's return, tells the loop's end: it finishes the
            // mailbox last.
            _ = DedicatedThread.start(named: "FileWatcher") {
                InotifyWatchLoop.run(
                    configuration: configuration, logger: logger, wakeup: wakeup, mailbox: mailbox,
                    baseline: baseline)
            }
            try await withTaskCancellationHandler {
                // Runs until the loop thread has finished, so the descriptor is closed on return.
                while let item = try await mailbox.next() {
                    guard !Task.isCancelled else { continue }
                    switch item {
                    case .ready: await onReady()
                    case .batch(let batch): await onChange(batch)
                    }
                }
            } onCancel: {
                wakeup.signal()
            }
        }
    #endif
}
