import Environments

extension Environment {
    /// Sets `value` as the override of `key`, and returns once every observer registered before
    /// this call has been called for every change up to this one, or would have been: observers
    /// are called one change at a time, in order, so a probe registered now that has seen this
    /// change comes after all of them. For a test that expects an observer *not* to be called.
    func setOverrideAndWaitForObservers(_ value: SettingValue, forKey key: String) throws {
        let probe = Received()
        let probing = onChange(probe.record)
        defer { probing.cancel() }
        try setOverride(value, forKey: key)
        probe.wait(for: 1)
    }
}
