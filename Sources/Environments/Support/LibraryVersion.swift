/// This package's version, as CHANGELOG.md and the git tag name it: what `envctl --version`
/// and `example-daemon --version` print. Bump it with each release.
@_spi(Integrations) public enum LibraryVersion {
    @_spi(Integrations) public static let current = "0.3.0"
}
