import Foundation
import TestSupport
import Testing

/// envctl matches keys by the library's rules (issue 44.3): a value typed for a key that a
/// `Secrets` entry covers in another case (`Straße` lists `STRASSE.Token`) is never echoed, even
/// before any file sets that key.
@Suite(.serialized, .blocking) struct EnvctlKeyIdentityTests {
    @Test func setDoesNotEchoANewKeyThatSecretsCoverInAnotherCase() throws {
        let directory = try ExampleConfigurationDirectory(plist: examplePlist(secrets: ["Straße"]))
        let secret = try directory.setSecret("STRASSE.Token")
        let show = try runEnvctl(["show", "--environment", "Staging", "--config-dir", directory.path])
        #expect(show.status == 0, "\(show.output)")
        #expect(show.output.contains("STRASSE.Token"), "\(show.output)")
        #expect(!show.output.contains(secret), "\(show.output)")
    }
}
