import Foundation
import TestSupport
import Testing

extension ExampleConfigurationDirectory {
    /// Sets `key` in `Common` to a new secret value with `envctl set`, expects the command to
    /// succeed and to echo the key as `<redacted>` without the value, and returns the value.
    func setSecret(_ key: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let secret = "s3cr3t-\(UUID().uuidString.prefix(8))"
        let set = try runEnvctl(["set", key, secret, "--config-dir", path])
        #expect(set.status == 0, "\(set.output)", sourceLocation: sourceLocation)
        #expect(!set.output.contains(secret), "\(set.output)", sourceLocation: sourceLocation)
        #expect(set.output.contains("Common.\(key) = <redacted>"), "\(set.output)", sourceLocation: sourceLocation)
        return secret
    }
}
