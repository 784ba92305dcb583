#if SwiftConfiguration
    import Configuration
    import Environments
    import EnvironmentsConfiguration
    import EnvironmentsDaemon
    import SystemdSupport
    import Testing

    /// Applications import our modules and swift-configuration in one file. If any public type of
    /// ours had the name of one of swift-configuration's, the unqualified names below would be
    /// ambiguous and this file would not compile; each name must also resolve to the module it
    /// belongs to.
    @Suite("No name clashes with swift-configuration")
    struct NameClashTests {
        @Test("swift-configuration's public types resolve unqualified next to all of our modules")
        func theirNames() {
            let names: [Any.Type] = [
                ConfigValue.self, ConfigKey.self, AbsoluteConfigKey.self, ConfigContent.self, ConfigType.self,
                (any ConfigSnapshot).self, (any ConfigProvider).self, ConfigReader.self, ConfigSnapshotReader.self,
                LookupResult.self, ConfigContextValue.self, (any AccessReporter).self, AccessEvent.self,
                SecretsSpecifier<String, String>.self, InMemoryProvider.self, MutableInMemoryProvider.self,
                EnvironmentVariablesProvider.self, KeyMappingProvider<InMemoryProvider>.self,
                BroadcastingAccessReporter.self, (any ExpressibleByConfigString).self,
            ]
            for type in names {
                #expect(qualifiedName(type).hasPrefix("Configuration."), "\(type) is not swift-configuration's")
            }
        }

        @Test("ours resolve unqualified next to swift-configuration")
        func ourNames() {
            let names: [Any.Type] = [
                Environment.self, EnvironmentSnapshot.self, EnvironmentOptions.self, EnvironmentError.self,
                SettingValue.self, ConfiguredValue.self, ValueSource.self, (any SettingValueConvertible).self,
                (any ConfigurationReading).self, EnvironmentChange.self, ReloadOutcome.self, BuildInfo.self,
                EnvironmentProvider.self, EnvironmentService.self, JournalLogHandler.self,
            ]
            let ourModules = [
                "Environments", "EnvironmentsConfiguration", "EnvironmentsDaemon", "SystemdSupport",
            ]
            for type in names {
                let module = String(qualifiedName(type).prefix { $0 != "." })
                #expect(ourModules.contains(module), "\(type) resolved to \(module)")
            }
        }
    }

    /// `Module.Name` for a type (existentials without their `any `).
    private func qualifiedName(_ type: Any.Type) -> String {
        let name = String(reflecting: type)
        return name.hasPrefix("any ") ? String(name.dropFirst(4)) : name
    }
#endif
