// swift-tools-version:6.2
import PackageDescription

// A Hummingbird 2 HTTP service whose settings come from Environments through
// swift-configuration, kept live under systemd by EnvironmentService.
//
//     swift run --package-path Examples/hummingbird-service hummingbird-service
let package = Package(
    name: "hummingbird-service",
    platforms: [.macOS(.v15)],
    // A product, so that a package that depends on this one can build it (CI's one release
    // build, in the Benchmarks package: scripts/build-release.sh).
    products: [.executable(name: "hummingbird-service", targets: ["hummingbird-service"])],
    dependencies: [
        // With the swift-configuration provider (EnvironmentsConfiguration), behind its trait.
        .package(name: "swift-environments", path: "../..", traits: ["SwiftConfiguration"]),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        .package(
            url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1",
            traits: ["ConfigurationSupport"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .executableTarget(
            name: "hummingbird-service",
            dependencies: [
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsConfiguration", package: "swift-environments"),
                .product(name: "EnvironmentsDaemon", package: "swift-environments"),
                .product(name: "SystemdSupport", package: "swift-environments"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        )
    ]
)
