/// An applied configuration change.
public struct EnvironmentChange: Sendable {
    /// The snapshot before the change.
    public var previous: EnvironmentSnapshot
    /// The snapshot now in place.
    public var current: EnvironmentSnapshot
    /// The leaf keys whose values changed, added or removed.
    public var changedKeys: [String]

    /// The change from `previous` to `current` of `changedKeys`.
    package init(previous: EnvironmentSnapshot, current: EnvironmentSnapshot, changedKeys: [String]) {
        self.previous = previous
        self.current = current
        self.changedKeys = changedKeys
    }
}

/// What a reload did.
public enum ReloadOutcome: Sendable {
    /// A new snapshot was swapped in.
    case applied(EnvironmentChange)
    /// The new configuration equals the current one: nothing was swapped, nobody notified.
    case unchanged(EnvironmentSnapshot)

    /// The snapshot in place after the reload.
    public var snapshot: EnvironmentSnapshot {
        switch self {
        case .applied(let change): change.current
        case .unchanged(let snapshot): snapshot
        }
    }
}
