// swift-tools-version:6.2
import PackageDescription

// A Vapor 4 service whose settings come from Environments, kept live under systemd by the
// EnvironmentsVapor integration (swift-environments' trait "Vapor").
//
//     CONFIGURATION_DIRECTORY=etc/vapor-service swift run --package-path Examples/vapor-service vapor-service serve
let package = Package(
    name: "vapor-service",
    platforms: [.macOS(.v15)],
    // A product, so that a package that depends on this one can build it (CI's one release
    // build, in the Benchmarks package: scripts/build-release.sh).
    products: [.executable(name: "vapor-service", targets: ["vapor-service"])],
    dependencies: [
        .package(name: "swift-environments", path: "../..", traits: ["Vapor"]),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .executableTarget(
            name: "vapor-service",
            dependencies: [
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "SystemdSupport", package: "swift-environments"),
                .product(name: "EnvironmentsVapor", package: "swift-environments"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        )
    ]
)
