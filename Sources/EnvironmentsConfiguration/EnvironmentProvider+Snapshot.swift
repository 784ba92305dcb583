#if SwiftConfiguration
    package import Configuration
    package import Environments

    extension EnvironmentProvider {
        /// One generation of the environment as a swift-configuration `ConfigSnapshot`.
        ///
        /// Every value read from it comes from the same immutable
        /// `EnvironmentSnapshot`: values that belong together, from one reload.
        package struct Snapshot: ConfigSnapshot, CustomStringConvertible {
            /// The environment's snapshot that answers every read.
            package let environmentSnapshot: EnvironmentSnapshot

            /// The name of the provider that made the snapshot.
            package let providerName: String

            /// Creates a snapshot over one of the environment's snapshots.
            package init(environmentSnapshot: EnvironmentSnapshot, providerName: String = "EnvironmentProvider") {
                self.environmentSnapshot = environmentSnapshot
                self.providerName = providerName
            }

            /// The value of a key in this snapshot, converted to `type`.
            ///
            /// - Throws: `EnvironmentError` with code `typeMismatch` when the value
            ///   cannot be read as `type`.
            package func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
                try EnvironmentProvider.lookup(EnvironmentProvider.path(of: key), as: type, in: environmentSnapshot)
            }

            /// For example `EnvironmentProvider[Production, generation 3, 12 values]`.
            package var description: String {
                "\(providerName)[\(environmentSnapshot.environmentName), generation \(environmentSnapshot.generation), "
                    + "\(environmentSnapshot.leafCount) values]"
            }
        }
    }
#endif
