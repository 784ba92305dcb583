import Environments
import EnvironmentsControl
import Varlink

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one rule for "is this value secret", as every output of envctl applies it: a value is
/// secret when its key, or a key above it, is listed in a file's `Secrets`, or the application
/// declares it `secret: true`, in the running daemon's declaration (`Schema`) or in the schema
/// its package installed (`/usr/share/<app-name>/schema.json`), or in `--schema`'s.
///
/// Each load envctl makes takes the declared keys as `EnvironmentOptions.secretKeys`, so that
/// every value it lists, prints or compares is redacted by the same rule the daemon's own
/// load applies (the Trust and identity article, "What leaves a host").
enum DeclaredSecrets {
    /// The keys `declaration` declares secret.
    static func keys(of declaration: SettingsDeclaration?) -> Set<String> {
        declaration?.secretKeys ?? []
    }

    /// The keys the installed schema of `applicationName` declares secret; none when there is
    /// no such schema or it cannot be read (``SchemaOptions``' own readers report that).
    static func installed(_ applicationName: String?) -> Set<String> {
        guard let applicationName else { return [] }
        let path = SchemaOptions.installedPath(applicationName)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        return keys(of: try? SchemaOptions.read(path))
    }

    /// The keys the running daemon on `client` declares secret (its `Schema`); none when it
    /// declares no settings or predates `Schema`.
    static func daemon(_ client: VarlinkClient?) -> Set<String> {
        guard let client, let reply = try? client.schema(ifServed: true), reply.declared else { return [] }
        return keys(of: try? SettingsDeclaration(jsonSchema: Data(reply.schema.utf8)))
    }
}
