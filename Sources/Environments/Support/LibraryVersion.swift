/// This package's version, as CHANGELOG.md and the git tag name it: what `envctl --version`
/// and `example-daemon --version` print. Bump it with each release.
package enum LibraryVersion {
    /// The version, `MAJOR.MINOR.PATCH` without a leading `v`: the newest release section of
    /// CHANGELOG.md, never a version that only its Unreleased section describes. The fleet
    /// status report names it as each host's library version.
    package static let current = "0.4.0"
}
