import Foundation

/// A property-list document that comes from somewhere other than the host's files, such as a
/// fleet's shared configuration in etcd.
///
/// It has the shape of an `Environments.plist` (or of a drop-in) and goes through the same
/// pipeline as a file: parsed, merged, interpolated and validated.
package struct ConfigurationDocument: Sendable, Hashable {
    /// Where it comes from, as provenance, errors and `envctl show` name it, for example
    /// `etcd:/fleet/app/Environments.plist@42` (key and revision).
    package var origin: String
    /// The property list, XML or binary.
    package var data: Data

    /// A document from `origin` holding `data`.
    package init(origin: String, data: Data) {
        self.origin = origin
        self.data = data
    }
}

/// Configuration documents that sit below the host's own files, as `/usr/lib` sits below
/// `/etc` for systemd: the host's `Environments.plist` and drop-ins override them setting by
/// setting.
///
/// The full order, lowest first: ``EnvironmentOptions/defaults``; the layer's documents, in
/// the order returned; the host's `Environments.plist`; its drop-ins; runtime overrides. With
/// a layer, the host's own files are optional: none at all, or only a drop-in directory, is
/// a valid host.
///
/// Every load and reload calls ``documents()``: return what is held in memory at once (a
/// watch keeps it current), never wait on the network there.
package protocol ConfigurationLayer: Sendable {
    /// The documents as of now, lowest first.
    func documents() throws(EnvironmentError) -> [ConfigurationDocument]
}
