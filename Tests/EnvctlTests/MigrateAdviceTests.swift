import Testing

@testable import envctl

/// What `envctl migrate` tells an operator to do about a key set under both names: a drop-in
/// is envctl's to change; the main file (a package's conffile) is edited by hand, since
/// `envctl edit` and `unset` only write drop-ins.
@Suite struct MigrateAdviceTests {
    @Test func aDropInIsChangedWithEnvctlAndTheMainFileByHand() {
        #expect(
            Migrate.howToRemove(in: "/etc/app/Environments.plist.d/60-db.plist")
                == "envctl unset KEY --drop-in 60-db, or envctl edit --drop-in 60-db")
        #expect(Migrate.howToRemove(in: "/etc/app/Environments.plist") == "edit /etc/app/Environments.plist by hand")
    }
}
