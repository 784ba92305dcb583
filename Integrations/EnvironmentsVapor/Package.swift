// swift-tools-version:6.2
import PackageDescription

// Vapor 4 applications on swift-environments: the configuration service runs with the
// application's lifecycle, and routes read the live values through `app.environments` and
// `req.environments`. A package of its own, so that no user of swift-environments resolves or
// builds Vapor.
let package = Package(
    name: "swift-environments-vapor",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EnvironmentsVapor", targets: ["EnvironmentsVapor"])
    ],
    dependencies: [
        .package(name: "swift-environments", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "EnvironmentsVapor",
            dependencies: [
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsDaemon", package: "swift-environments"),
                // ThreadBridge: the synchronous shutdown waits for the service's task.
                .product(name: "_EnvironmentsIntegrationSupport", package: "swift-environments"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "EnvironmentsVaporTests",
            dependencies: [
                "EnvironmentsVapor",
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsDaemon", package: "swift-environments"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ]
)
