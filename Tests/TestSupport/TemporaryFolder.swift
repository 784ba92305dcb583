import Foundation

/// A new directory under the system's temporary directory, `PREFIX-XXXXXXXX`, removed with all
/// that is in it when the last reference to it goes.
///
/// A test's own directory type keeps one as a stored property, so that the directory lives as
/// long as the test holds that type; a test that only needs the path uses
/// ``withTemporaryFolder(_:_:)``, which keeps it for the body's whole run.
package final class TemporaryFolder: Sendable {
    /// The directory's absolute path.
    package let path: String

    /// Creates `PREFIX-XXXXXXXX` (eight characters of a new UUID) in the temporary directory.
    package init(_ prefix: String) throws {
        path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs `body` with the path of a new ``TemporaryFolder`` named after `prefix`, and removes the
/// folder once `body` returns or throws.
package func withTemporaryFolder<Result>(_ prefix: String, _ body: (String) throws -> Result)
    throws -> Result
{
    let folder = try TemporaryFolder(prefix)
    return try withExtendedLifetime(folder) { try body(folder.path) }
}
