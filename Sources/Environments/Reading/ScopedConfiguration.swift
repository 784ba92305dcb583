/// A view of one dictionary of a configuration, read with key paths relative to it.
///
/// Made by `scoped(_:)`. A view of `Environment` is live: every read
/// goes to the environment's current snapshot, so it follows reloads; a view of an
/// `EnvironmentSnapshot` stays on that snapshot. It is a `ConfigurationReading` like any
/// other, so it can be handed to a component that takes `some ConfigurationReading` and knows
/// nothing of where its settings sit:
///
/// ```swift
/// let database = Environment.shared.scoped("Database")
/// let host = database.get("Host", default: "localhost")   // Database.Host
/// let pool = try database.decode(PoolSettings.self, from: "Pool")   // Database.Pool
/// let all = try database.decode(DatabaseSettings.self)   // the whole Database dictionary
/// ```
///
/// Errors name the full key path (`Database.Port`), as the operator finds it in the files.
/// Each read joins the scope and the key into one path, so a view costs one string
/// concatenation per read over the reader it views.
struct ScopedConfiguration: ConfigurationReading {
    /// The key path of the dictionary viewed, from the root of the configuration
    /// (`Database`, `Services.Billing`).
    let scope: String
    let base: any ConfigurationReading

    init(base: any ConfigurationReading, scope: String) {
        self.base = base
        self.scope = scope
    }

    /// The full key path of `key`, a path relative to ``scope``.
    func absoluteKey(_ key: String) -> String {
        if scope.isEmpty { return key }
        return key.isEmpty ? scope : scope + "." + key
    }

    /// The value at a key path relative to ``scope``.
    func value(forKey key: String) -> SettingValue? { base.value(forKey: absoluteKey(key)) }

    /// The snapshot the view reads, whole (its keys are not relative).
    var snapshot: EnvironmentSnapshot { base.snapshot }
}

extension ConfigurationReading {
    /// A view of the dictionary at `keyPath`, read with keys relative to it, as the
    /// Objective-C original's `configWithScope:` handed out.
    ///
    /// A view of ``Environment`` is live: every read goes to the environment's current
    /// snapshot, so it follows reloads; a view of an ``EnvironmentSnapshot`` stays on that
    /// snapshot. Hand it to a component that takes `some ConfigurationReading` and knows
    /// nothing of where its settings sit:
    ///
    /// ```swift
    /// let database = Environment.shared.scoped("Database")
    /// let host = database.get("Host", default: "localhost")   // Database.Host
    /// let pool = try database.decode(PoolSettings.self, from: "Pool")   // Database.Pool
    /// ```
    ///
    /// Errors name the full key path (`Database.Port`), as the operator finds it in the files.
    /// The dictionary need not exist: reads through the view then find nothing, as reads of
    /// the full paths would. A view of a view narrows it (`scoped("A").scoped("B")` views
    /// `A.B`). Each read joins the scope and the key into one path, so a view costs one string
    /// concatenation per read over the reader it views.
    public func scoped(_ keyPath: String) -> some ConfigurationReading {
        if let view = self as? ScopedConfiguration {
            return ScopedConfiguration(base: view.base, scope: view.absoluteKey(keyPath))
        }
        return ScopedConfiguration(base: self, scope: keyPath)
    }

    /// `key` as the operator finds it in the files: the full path through any scope.
    var fullKeyPath: (String) -> String {
        if let view = self as? ScopedConfiguration { return view.absoluteKey }
        return { $0 }
    }
}
