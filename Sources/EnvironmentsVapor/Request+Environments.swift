#if Vapor
    public import Environments
    public import Vapor

    extension Request {
        private struct SnapshotKey: StorageKey {
            typealias Value = EnvironmentSnapshot
        }

        /// The application's configuration as this request sees it: the snapshot current at the
        /// first read in the request, kept for the rest of it, so that the values one request
        /// reads all come from one generation even if a reload lands meanwhile; the next request
        /// sees the reload.
        ///
        /// ```swift
        /// app.get("greeting") { req in
        ///     req.environments[Settings.greeting]
        /// }
        /// ```
        ///
        /// Typed reads (`get`, `require`, `decode`, a declared `Setting`) work as on
        /// ``Vapor/Application/environments``.
        public var environments: EnvironmentSnapshot {
            if let pinned = storage[SnapshotKey.self] { return pinned }
            let snapshot = application.environments.snapshot
            storage[SnapshotKey.self] = snapshot
            return snapshot
        }
    }
#endif
