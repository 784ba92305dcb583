// swift-tools-version:6.2
import PackageDescription

// The smallest daemon on swift-environments: a template to copy. One service of its own that
// follows its configuration, beside EnvironmentService (reloads, sd_notify, journal, control
// socket), stopped gracefully on SIGTERM.
//
//     swift run --package-path Examples/minimal-daemon minimal-daemon --config-dir Examples/minimal-daemon/config
//
// Copied out of this repository ("Getting started" shows how), name swift-environments by the
// path of a clone beside the copy, which resolves with no tag, or, once your clone has the
// release's tag, by the URL you clone it from (a placeholder here: replace it):
//     .package(path: "../swift-environments"),
//     .package(url: "https://git.example/swift-environments.git", from: "0.4.0"),
let package = Package(
    name: "minimal-daemon",
    platforms: [.macOS(.v15)],
    // A product, so that CI's one release build (the Benchmarks package, scripts/build-release.sh)
    // can build it.
    products: [.executable(name: "minimal-daemon", targets: ["minimal-daemon"])],
    dependencies: [
        .package(name: "swift-environments", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "minimal-daemon",
            dependencies: [
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsDaemon", package: "swift-environments"),
                .product(name: "SystemdSupport", package: "swift-environments"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        )
    ]
)
