import Environments

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Which files a journal of a change that spans files (``TransactionJournal``) may name for
/// `envctl` to follow it (``FileTransaction/recover(in:scope:note:)``): the journal is an
/// instruction that root may follow, so it reaches no file outside what the change it belongs
/// to writes.
package struct JournalScope: Sendable {
    /// Whether the journal may name the file at this path (its directory's symbolic links
    /// resolved).
    package var mayName: @Sendable (String) -> Bool
    /// What it may name, for messages: `a file of the configuration /etc/app (its Environments.plist or a drop-in in /etc/app/Environments.plist.d)`.
    package var description: String

    package init(description: String, mayName: @escaping @Sendable (String) -> Bool) {
        self.description = description
        self.mayName = mayName
    }

    /// A configuration's: its main file and its drop-ins (`*.plist`, not hidden, directly in
    /// its drop-in directory).
    package static func configuration(mainFile: String, dropInDirectory: String) -> JournalScope {
        JournalScope(
            description:
                "a file of the configuration it belongs to (\(mainFile) or a drop-in in \(dropInDirectory))"
        ) {
            TransactionJournal.isConfigurationFile($0, mainFile: mainFile, dropInDirectory: dropInDirectory)
        }
    }
}
