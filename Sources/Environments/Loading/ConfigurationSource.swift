#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A source of configuration besides the host's own files: a fleet's shared configuration in
/// etcd, a directory of mounted Kubernetes secrets, a key-value store.
///
/// A source hands the library property-list documents shaped like an `Environments.plist` (a
/// `Common` dictionary, one per environment, `Instances`) or like a drop-in. They go through
/// the same pipeline as the host's files: parsed, merged, interpolated, checked against the
/// declaration and the application's `validate`, all before anything is swapped in. A bad
/// document is a rejected load with the document's ``ConfigurationDocument/origin`` as its
/// file, and the last good configuration stays.
///
/// The documents sit below the host's own files, as `/usr/lib` sits below `/etc` for
/// systemd: the full order, lowest first, is the declared defaults, each source's documents
/// (sources in the order of ``EnvironmentOptions/sources``, each one's documents in the order
/// it returns them), the host's `Environments.plist`, its drop-ins, `APP_` variables and
/// runtime overrides. The host's files override a source setting by setting, so the operator
/// of a host always has the last word; with a source, the host's own files are optional.
///
/// Every load and reload calls ``documents()`` on the thread that builds the configuration:
/// return what the source holds in memory, at once. Never wait on the network or a slow disk
/// there; keep the documents current from a task or a thread of the source's own, and when
/// they change, ask the running daemon to reload (`EnvironmentService.reload(from:revision:)`
/// in EnvironmentsDaemon), which names the source by ``name`` in the journal, the history,
/// the metrics and `STATUS=`. See <doc:AddingASource>.
public protocol ConfigurationSource: Sendable {
    /// One word that names the source wherever a reload it started is shown: the journal's
    /// `CONFIG_TRIGGER`, `envctl history`, the state file, the metrics' `trigger` label and
    /// `STATUS=` (`Reloading configuration (fleet)`), beside the daemon's own `signal`,
    /// `file` and `control`.
    ///
    /// Lowercase ASCII letters, digits and `-`, at most 32 characters, not `start`, `signal`,
    /// `file` or `control`; a name outside these rules is shown as `source`. The etcd fleet's
    /// is `fleet`.
    var name: String { get }

    /// The documents as of now, lowest first, each with the origin that provenance
    /// (`envctl show`), errors and the journal name it by.
    ///
    /// - Throws: ``EnvironmentError`` when the source cannot give its documents (over a limit,
    ///   unreadable): the load or reload is rejected with it, and the last good configuration
    ///   stays. ``EnvironmentError/unreadable(_:reason:hint:)`` makes one.
    func documents() throws(EnvironmentError) -> [ConfigurationDocument]
}

/// One property-list document from a ``ConfigurationSource``.
public struct ConfigurationDocument: Sendable, Hashable {
    /// Where it comes from, as provenance (`envctl show`), errors and the journal name it, in
    /// place of a file's path: for example `etcd:/fleet/app/Environments.plist@42` (key and
    /// revision), or `k8s:/run/secrets/app/Database.Password`.
    public var origin: String
    /// The property list, XML or binary, shaped like an `Environments.plist` or a drop-in.
    public var data: Data

    /// A document from `origin` holding `data`.
    public init(origin: String, data: Data) {
        self.origin = origin
        self.data = data
    }
}

extension ConfigurationSource {
    /// ``name`` if it follows the rules, else `source`: what the daemon shows.
    package var triggerName: String {
        Self.isValidName(name) ? name : "source"
    }

    /// Whether `name` may name a source (see ``name``).
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 32 && !["start", "signal", "file", "control"].contains(name)
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }
}

extension EnvironmentError {
    /// The error of a ``ConfigurationSource`` that cannot give its documents: one over a limit,
    /// unreadable, malformed before it is even a property list. A load or reload with it is
    /// rejected, and the last good configuration stays.
    ///
    /// ```swift
    /// throw EnvironmentError.unreadable("k8s:/run/secrets/app", reason: "more than 1,000 files", hint: "…")
    /// ```
    ///
    /// - Parameters:
    ///   - origin: The document or place that cannot be read, as a ``ConfigurationDocument``'s
    ///     origin names it: the error's ``file``.
    ///   - reason: What is wrong, without any value that may be secret.
    ///   - hint: What to do about it.
    /// - Returns: An error with code ``Code/fileUnreadable``.
    public static func unreadable(_ origin: String, reason: String, hint: String? = nil) -> EnvironmentError {
        EnvironmentError(.fileUnreadable, reason, file: origin, hint: hint)
    }
}
