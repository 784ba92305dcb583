import Logging

#if os(Linux)
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
/// moment later, may be reported twice, each time in a complete state. The polling fallback
/// uses only ``debounce``.
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
    ///   - logger: Where to log, mostly at debug and trace level.
    package convenience init(
        files: [String], directories: [String], debounce: Duration = .milliseconds(50),
        settle: Duration = .milliseconds(2), logger: Logger = Logger(label: "FileWatching")
    ) {
        self.init(
            files: files, directories: directories, debounce: debounce, settle: settle,
            logger: logger, backend: .native)
    }

    /// Creates a watcher with an explicit backend (tests use ``Backend/polling(interval:)``).
    ///
    /// - Parameters:
    ///   - files: Regular files to watch.
    ///   - directories: Directories whose entries matter.
    ///   - debounce: The quiet time after an event of a save that may still be in progress.
    ///   - settle: The quiet time after an event that completed a save.
    ///   - logger: Where to log.
    ///   - backend: How to detect changes.
    init(
        files: [String], directories: [String], debounce: Duration,
        settle: Duration = .milliseconds(2), logger: Logger, backend: Backend
    ) {
        self.files = files
        self.directories = directories
        self.debounce = debounce
        self.settle = settle
        self.logger = logger
        self.backend = backend
        self.configuration = WatchConfiguration(
            files: files, directories: directories, debounce: debounce, settle: settle)
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
    /// - Throws: ``InotifyError`` if inotify cannot be set up or fails while watching.
    package func run(onChange: @escaping @Sendable (FileChangeBatch) async -> Void) async throws {
        try await run(onReady: {}, onChange: onChange)
    }

    /// Watches until the calling task is cancelled, telling `onReady` when watching has begun.
    ///
    /// Like ``run(onChange:)``. `onReady` is called once, before any `onChange`, as soon as
    /// the initial watches are in place: a change made after that is reported. Reading the
    /// configuration in `onReady` therefore leaves no window in which a change is missed.
    ///
    /// - Parameters:
    ///   - onReady: Called once the initial watches are in place.
    ///   - onChange: Called with each batch of changes.
    /// - Throws: ``InotifyError`` if inotify cannot be set up or fails while watching.
    package func run(
        onReady: @escaping @Sendable () async -> Void,
        onChange: @escaping @Sendable (FileChangeBatch) async -> Void
    ) async throws {
        switch backend {
        case .polling(let interval):
            let loop = PollingWatchLoop(configuration: configuration, interval: interval, logger: logger)
            await loop.run(onReady: onReady, onChange: onChange)
        case .native:
            #if os(Linux)
                try await runInotify(onReady: onReady, onChange: onChange)
            #else
                let loop = PollingWatchLoop(
                    configuration: configuration, interval: .milliseconds(500), logger: logger)
                await loop.run(onReady: onReady, onChange: onChange)
            #endif
        }
    }

    #if os(Linux)
        /// Runs ``InotifyWatchLoop`` on its own thread and calls back from the calling task.
        private func runInotify(
            onReady: @escaping @Sendable () async -> Void,
            onChange: @escaping @Sendable (FileChangeBatch) async -> Void
        ) async throws {
            let mailbox = BatchMailbox()
            let wakeup = try WakeupPipe()
            let configuration = configuration
            let logger = logger
            let thread = Thread {
                InotifyWatchLoop.run(
                    configuration: configuration, logger: logger, wakeup: wakeup, mailbox: mailbox)
            }
            thread.name = "FileWatcher"
            thread.start()
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
