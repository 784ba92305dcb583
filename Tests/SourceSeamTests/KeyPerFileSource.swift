import Dispatch
import Environments
import EnvironmentsDaemon
import Foundation
import Synchronization

/// A directory of key-per-file values, as Kubernetes mounts a Secret or a ConfigMap and systemd
/// mounts credentials (`$CREDENTIALS_DIRECTORY`): each file's name is a key (dots nest:
/// `Database.Password`), its content the value, one trailing newline dropped. Written against
/// the public API alone, as another package would write it.
///
/// Kubernetes updates such a volume atomically: the files live in a hidden directory
/// (`..2025_06_01_12_00_00.123`), each key is a link through `..data`, and an update writes a
/// new hidden directory and renames a new `..data` link over the old one. A read goes through
/// `..data` once, so it sees one generation whole, never half of each; names that start with a
/// dot are never keys.
///
/// The directory is read off Swift's cooperative pool (a queue of the source's own), and
/// ``documents()`` returns what the last read found, at once.
final class KeyPerFileSource: ConfigurationSource {
    /// `keyfiles`: the trigger of the reloads it asks for, in the journal and the metrics.
    let name = "keyfiles"
    /// The mounted directory.
    let directory: String
    /// Whether every value is a secret (a Kubernetes Secret, credentials), redacted everywhere.
    let secret: Bool

    /// The largest file read, in bytes; a larger one fails the reload.
    static let maximumFileSize = 64 * 1024

    private let held = Mutex<Result<[ConfigurationDocument], EnvironmentError>>(.success([]))
    private let queue = DispatchQueue(label: "KeyPerFileSource")

    private init(directory: String, secret: Bool) {
        self.directory = directory
        self.secret = secret
    }

    /// A source for `directory`, read once.
    static func open(directory: String, secret: Bool = false) async -> KeyPerFileSource {
        let source = KeyPerFileSource(directory: directory, secret: secret)
        await source.read()
        return source
    }

    func documents() throws(EnvironmentError) -> [ConfigurationDocument] {
        try held.withLock { $0 }.get()
    }

    /// The directory changed (told by a watcher, an inotify on `..data`, a signal): reads it
    /// again and asks `service` to reload.
    @discardableResult
    func directoryChanged(in service: EnvironmentService) async -> ReloadReport {
        await read()
        return await service.reload(from: self)
    }

    /// Reads the directory on the source's queue.
    private func read() async {
        let result = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.readNow()) }
        }
        held.withLock { $0 = result }
    }

    /// One document per file, in the order of their names, through `..data` when there is one.
    private func readNow() -> Result<[ConfigurationDocument], EnvironmentError> {
        let files = FileManager.default
        // One generation: the directory `..data` points to now, resolved once.
        let data = directory + "/..data"
        let base = (try? files.destinationOfSymbolicLink(atPath: data)).map { link in
            link.hasPrefix("/") ? link : directory + "/" + link
        }
        let names: [String]
        do {
            names = try files.contentsOfDirectory(atPath: base ?? directory).filter { !$0.hasPrefix(".") }.sorted()
        } catch {
            return .failure(.unreadable("keyfiles:\(directory)", reason: "cannot list the directory: \(error)"))
        }
        var documents: [ConfigurationDocument] = []
        for name in names {
            let path = (base ?? directory) + "/" + name
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let origin = "keyfiles:\(directory)/\(name)"
            guard let contents = files.contents(atPath: path) else {
                return .failure(.unreadable(origin, reason: "cannot read the file"))
            }
            guard contents.count <= Self.maximumFileSize else {
                let reason = "larger than \(Self.maximumFileSize) bytes"
                return .failure(.unreadable(origin, reason: reason, hint: "mount it as a file"))
            }
            var value = String(decoding: contents, as: UTF8.self)
            if value.hasSuffix("\n") { value.removeLast() }
            do {
                documents.append(ConfigurationDocument(origin: origin, data: try document(key: name, value: value)))
            } catch {
                return .failure(.unreadable(origin, reason: "cannot encode the value: \(error)"))
            }
        }
        return .success(documents)
    }

    /// `{Common: {A: {B: value}}, Secrets: [A.B]}` for the key `A.B`.
    private func document(key: String, value: String) throws -> Data {
        var nested: Any = value
        for component in key.split(separator: ".", omittingEmptySubsequences: false).reversed() {
            nested = [String(component): nested]
        }
        var root: [String: Any] = ["Common": nested]
        if secret { root["Secrets"] = [key] }
        return try PropertyListSerialization.data(fromPropertyList: root, format: .xml, options: 0)
    }
}
