#if os(Linux)
    import Glibc
    import Logging
    import ThreadBridge

    /// The inotify side of ``FileWatcher``: runs on a dedicated thread, reads events, maps them
    /// to configured paths, coalesces them and re-adds watches after every batch.
    ///
    /// It also polls the mount table (``MountWatch``): when a mount on, above or below a watched
    /// directory changes, the watches are set up again on what is now visible (the old ones
    /// watch the hidden mount) and every configured path is reported, marked
    /// ``FileChangeBatch/mountsChanged``. The table is read at most once per
    /// ``WatchConfiguration/debounce``, however many mounts change elsewhere.
    final class InotifyWatchLoop {
        /// The events watched for in every directory.
        static let directoryMask: Inotify.Mask = [
            .created, .deleted, .movedFrom, .movedTo, .closedAfterWriting, .modified,
            .attributesChanged, .deletedSelf, .movedSelf, .onlyDirectory, .dontFollow,
        ]

        /// Events about a watched directory itself that affect everything it holds.
        private static let selfEvents: Inotify.Mask = [.deletedSelf, .movedSelf, .unmounted]

        /// Events after which the affected file is complete: the close of a file opened for
        /// writing, and the rename that finishes an atomic save or swaps a ConfigMap's `..data`.
        ///
        /// A burst that ends with one of them is reported after the short
        /// ``WatchConfiguration/settle``; every other event (create, modify, delete, moved-from,
        /// attributes, events about a directory itself, overflow) may be part of a save still in
        /// progress and waits for the full ``WatchConfiguration/debounce``.
        static let completionEvents: Inotify.Mask = [.closedAfterWriting, .movedTo]

        /// Whether an event with `mask` is a completion event (see ``completionEvents``).
        static func isCompletion(_ mask: Inotify.Mask) -> Bool {
            !mask.isDisjoint(with: completionEvents)
        }

        private let configuration: WatchConfiguration
        private let logger: Logger
        private let wakeup: WakeupPipe
        private let mailbox: BatchMailbox
        private let inotify: Inotify
        private let clock = ContinuousClock()
        private var plan = WatchPlan()
        private var watches: [Inotify.WatchDescriptor: Set<String>] = [:]
        /// The mount table, if it can be read; `nil` watches files alone.
        private let mountWatch: MountWatch?
        /// The mount table as last read.
        private var mounts: [MountInfoEntry] = []
        /// When to read the mount table again after the kernel said it changed.
        private var mountCheckDue: ContinuousClock.Instant?
        /// The burst being collected; read by tests.
        private(set) var accumulator: BatchAccumulator

        /// Creates the loop and its inotify instance; ``run(configuration:logger:wakeup:mailbox:)``
        /// is the entry point, tests call ``handle(_:)`` directly.
        init(
            configuration: WatchConfiguration, logger: Logger, wakeup: WakeupPipe,
            mailbox: BatchMailbox
        ) throws {
            self.configuration = configuration
            self.logger = logger
            self.wakeup = wakeup
            self.mailbox = mailbox
            self.inotify = try Inotify()
            do {
                let mountWatch = try MountWatch()
                mounts = try mountWatch.read()
                self.mountWatch = mountWatch
            } catch {
                logger.warning(
                    "Cannot watch the mount table; a configuration extension merged over the files is not noticed",
                    metadata: ["error": "\(error)", "hint": "reload with SIGHUP after systemd-confext merge"])
                self.mountWatch = nil
            }
            self.accumulator = BatchAccumulator(
                debounce: configuration.debounce, settle: configuration.settle,
                maximumDelay: configuration.maximumDelay, openWriteLimit: configuration.openWriteLimit)
        }

        /// Watches until `wakeup` is signalled, then closes the inotify descriptor and finishes
        /// `mailbox` (with the error, if one ended the loop). Blocks the calling thread.
        ///
        /// - Parameter baseline: What the paths looked like when they were last read (by the
        ///   polling fallback this loop takes over from): a difference found once the watches
        ///   are in place is reported as a change.
        static func run(
            configuration: WatchConfiguration, logger: Logger, wakeup: WakeupPipe,
            mailbox: BatchMailbox, baseline: [String: FileFingerprint]? = nil
        ) {
            do {
                let loop = try InotifyWatchLoop(
                    configuration: configuration, logger: logger, wakeup: wakeup, mailbox: mailbox)
                defer { loop.inotify.close() }
                try loop.run(baseline: baseline)
            } catch {
                logger.debug("File watching failed", metadata: ["error": "\(error)"])
                mailbox.finish(throwing: error)
                return
            }
            mailbox.finish()
        }

        private func run(baseline: [String: FileFingerprint]?) throws {
            try updateWatches()
            logger.debug(
                "Watching for file changes",
                metadata: [
                    "paths": "\(configuration.allPaths.sorted())",
                    "directories": "\(watches.values.flatMap { $0 }.sorted())",
                ])
            mailbox.markReady()
            if let baseline {
                let changed = FileFingerprint.changedPaths(from: baseline, to: FileFingerprint.all(of: configuration))
                if !changed.isEmpty { accumulator.add(paths: changed, completion: true, at: clock.now) }
            }
            while true {
                let wake = [accumulator.deadline, mountCheckDue].compactMap { $0 }.min()
                var descriptors = [
                    pollfd(fd: inotify.fileDescriptor, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakeup.readDescriptor, events: Int16(POLLIN), revents: 0),
                    // POLLIN is always set on the mount table; POLLPRI (with POLLERR) means it changed.
                    pollfd(fd: mountWatch?.fileDescriptor ?? -1, events: Int16(POLLPRI), revents: 0),
                ]
                let result = poll(&descriptors, 3, Inotify.milliseconds(wake.map { $0 - clock.now }))
                if result < 0 {
                    if errno == EINTR { continue }
                    throw InotifyError(operation: "poll", errno: errno)
                }
                if descriptors[1].revents != 0 {
                    logger.debug("Stopped watching for file changes")
                    return
                }
                if descriptors[0].revents & Int16(POLLIN) != 0 {
                    handle(try inotify.readEvents())
                } else if descriptors[0].revents != 0 {
                    throw InotifyError(operation: "poll", errno: EIO)
                }
                if descriptors[2].revents & Int16(POLLPRI | POLLERR) != 0, mountCheckDue == nil {
                    // Read the table a debounce later: a storm of mounts costs one read per debounce.
                    mountCheckDue = clock.now + configuration.debounce
                }
                if let due = mountCheckDue, clock.now >= due {
                    mountCheckDue = nil
                    try checkMounts()
                }
                if accumulator.deadline.map({ clock.now >= $0 }) ?? false {
                    // Re-resolve before reporting: when the callback reads the files, watches on their
                    // new targets are already in place, so no later change can be missed.
                    try updateWatches()
                    if let batch = accumulator.takeIfDue(at: clock.now), !batch.isEmpty {
                        logger.debug("Files changed", metadata: ["batch": "\(batch)"])
                        mailbox.deliver(batch)
                    }
                }
            }
        }

        /// Maps events to configured paths and adds them to the current burst, in order, each
        /// marked as a completion event (one of ``completionEvents``) or not.
        ///
        /// `events` is everything one drain of the inotify descriptor returned, so both halves of
        /// a rename normally arrive in the same call; the last relevant event decides whether the
        /// burst is due after the settle or after the debounce.
        func handle(_ events: [Inotify.Event]) {
            let now = clock.now
            for event in events {
                logger.trace("inotify event", metadata: ["event": "\(event)"])
                if event.mask.contains(.queueOverflowed) {
                    logger.warning("inotify event queue overflowed; reporting every path as changed")
                    accumulator.add(paths: configuration.allPaths, completion: false, overflowed: true, at: now)
                    continue
                }
                guard let directories = watches[event.watchDescriptor] else { continue }
                if event.mask.contains(.ignored) {
                    watches[event.watchDescriptor] = nil
                    continue
                }
                var affected = Set<String>()
                for directory in directories {
                    if let name = event.name {
                        affected.formUnion(plan.affectedPaths(directory: directory, name: name))
                    } else if !event.mask.isDisjoint(with: Self.selfEvents) {
                        affected.formUnion(plan.affectedPaths(directory: directory, name: nil))
                    }
                }
                if !affected.isEmpty {
                    let entry = event.name.flatMap { name in directories.min().map { PathResolver.join($0, name) } }
                    // IN_UNMOUNT: the file system holding a watched directory went away. A
                    // `systemd-confext refresh` may put up a new overlay whose line in the mount
                    // table reads exactly as the old one did (the same mount id and device), so
                    // this event is how such a remount is noticed.
                    accumulator.add(
                        paths: affected, completion: Self.isCompletion(event.mask),
                        mountsChanged: event.mask.contains(.unmounted), entry: entry,
                        write: entry.map { Self.writeEffect(of: event.mask, on: $0) } ?? .none, at: now)
                }
            }
        }

        /// Reads the mount table and, if a mount that matters to a watched directory changed,
        /// watches what is visible now and adds every configured path to the burst.
        private func checkMounts() throws {
            guard let mountWatch else { return }
            let current: [MountInfoEntry]
            do {
                current = try mountWatch.read()
            } catch {
                logger.warning("Cannot read the mount table", metadata: ["error": "\(error)"])
                return
            }
            let before = MountTable.relevantMounts(in: mounts, to: plan.directories)
            let after = MountTable.relevantMounts(in: current, to: plan.directories)
            mounts = current
            guard before != after else {
                logger.trace("The mount table changed elsewhere")
                return
            }
            logger.debug(
                "A mount over the watched directories changed",
                metadata: [
                    "before": "\(before.map(\.mountPoint))", "after": "\(after.map(\.mountPoint))",
                ])
            // The old watches are on the mount that is now hidden (or gone).
            try updateWatches()
            accumulator.add(paths: configuration.allPaths, mountsChanged: true, at: clock.now)
        }

        /// What an event does to the writer of the entry at `path`: a write, or the creation of
        /// an empty regular file, opens it; its close, or a rename or deletion of the name, ends
        /// it. Directories and symbolic links have no writer.
        static func writeEffect(of mask: Inotify.Mask, on path: String) -> BatchAccumulator.WriteEffect {
            if mask.contains(.isDirectory) { return .none }
            if !mask.isDisjoint(with: [.closedAfterWriting, .movedTo, .movedFrom, .deleted]) { return .closed }
            if mask.contains(.modified) { return .opened }
            if mask.contains(.created) {
                var info = stat()
                guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == 0 else { return .none }
                return .opened
            }
            return .none
        }

        /// Resolves every configured path again and makes the watches match the new plan.
        ///
        /// `inotify_add_watch` returns the existing descriptor for an inode that is already
        /// watched, so re-adding everything is cheap and also notices a directory that was
        /// replaced by another one at the same path.
        ///
        /// - Throws: ``InotifyError`` when the kernel's limits leave no room for a watch
        ///   (``InotifyError/isResourceLimit``): the watcher falls back to polling.
        private func updateWatches() throws {
            for _ in 0..<3 {
                plan = WatchPlan(configuration: configuration)
                var updated: [Inotify.WatchDescriptor: Set<String>] = [:]
                var vanished = false
                for directory in plan.directories.sorted() {
                    do {
                        let descriptor = try inotify.addWatch(path: directory, mask: Self.directoryMask)
                        updated[descriptor, default: []].insert(directory)
                    } catch let error as InotifyError where [ENOENT, ENOTDIR, ELOOP].contains(error.errno) {
                        // Changed between resolving and watching: resolve again.
                        logger.debug("Directory vanished while watching it", metadata: ["error": "\(error)"])
                        vanished = true
                    } catch let error as InotifyError where error.isResourceLimit {
                        throw error
                    } catch {
                        logger.warning("Cannot watch directory", metadata: ["error": "\(error)"])
                    }
                }
                for descriptor in watches.keys where updated[descriptor] == nil {
                    try? inotify.removeWatch(descriptor)
                }
                watches = updated
                if !vanished { return }
            }
        }
    }
#endif
