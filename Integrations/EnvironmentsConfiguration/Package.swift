// swift-tools-version:6.2
import PackageDescription

// A live `ConfigProvider` for apple/swift-configuration over an `Environment`. A package of its
// own, so that users of swift-environments who do not use swift-configuration never resolve it
// (nor swift-collections, swift-system and what its traits pull in).
let package = Package(
    name: "swift-environments-configuration",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EnvironmentsConfiguration", targets: ["EnvironmentsConfiguration"])
    ],
    dependencies: [
        .package(name: "swift-environments", path: "../.."),
        // No traits: the provider needs none.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "EnvironmentsConfiguration",
            dependencies: [
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "_EnvironmentsIntegrationSupport", package: "swift-environments"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        .testTarget(
            name: "EnvironmentsConfigurationTests",
            dependencies: [
                "EnvironmentsConfiguration",
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsDaemon", package: "swift-environments"),
                .product(name: "SystemdSupport", package: "swift-environments"),
                .product(name: "_EnvironmentsIntegrationSupport", package: "swift-environments"),
                .product(name: "_EnvironmentsTestSupport", package: "swift-environments"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
            ]
        ),
    ]
)
