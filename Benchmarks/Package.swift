// swift-tools-version:6.2
import PackageDescription

// Benchmarks, side by side with apple/swift-configuration, in a package of their own so that
// users of swift-environments and its tests never build the peer. Also the one release build
// graph of CI (scripts/build-release.sh).
//
//     swift run -c release --package-path Benchmarks environment-benchmarks [--json]
let package = Package(
    name: "swift-environments-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // With the fleet (EnvironmentsEtcd, envctl-fleet, example-fleet-daemon, which CI's release
        // graph builds for the containers and the Debian packages) and the swift-configuration
        // provider (benchmarked against its peer).
        .package(name: "swift-environments", path: "..", traits: ["Fleet", "SwiftConfiguration"]),
        // Not used by a target here: named so that CI's one release build (scripts/build-release.sh)
        // builds the Hummingbird example in the same graph as the benchmarks, the example daemon
        // and envctl, compiling swift-nio and this package once (SwiftPM warns that no target
        // uses it; running the benchmarks never compiles it).
        .package(name: "hummingbird-service", path: "../Examples/hummingbird-service"),
        // The same for the template daemon (Examples/minimal-daemon), which scripts/test.sh runs.
        .package(name: "minimal-daemon", path: "../Examples/minimal-daemon"),
        // And for the Vapor example (run_vapor_e2e.py): Vapor is resolved here, for CI's release
        // graph, and never by swift-environments itself.
        .package(name: "vapor-service", path: "../Examples/vapor-service"),
        .package(
            url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0",
            traits: ["PropertyList", "Reloading"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Needed by swift-configuration's Reloading trait. Named here because swift-environments
        // depends on swift-configuration without traits (behind its trait SwiftConfiguration), and SwiftPM 6.3 then fails to add the
        // trait's dependencies while resolving ("exhausted attempts ... 'swift-metrics'").
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.7.0"),
    ],
    targets: [
        // glibc's count of heap bytes in use, which Swift's Glibc module does not export.
        .target(name: "CHeapUsage"),
        // The files both executables read, `blackHole`, `Statistics` and progress output.
        .target(
            name: "BenchmarkFixtures",
            dependencies: [.product(name: "Environments", package: "swift-environments")]
        ),
        // One kind of lookup, untimed, for valgrind's instruction count (count-instructions.sh).
        .executableTarget(
            name: "lookup-profile",
            dependencies: [
                "BenchmarkFixtures",
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsConfiguration", package: "swift-environments"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "environment-benchmarks",
            dependencies: [
                "BenchmarkFixtures",
                "CHeapUsage",
                .product(name: "Environments", package: "swift-environments"),
                .product(name: "EnvironmentsDaemon", package: "swift-environments"),
                .product(name: "EnvironmentsConfiguration", package: "swift-environments"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // Not imported: named so that the Reloading trait's dependency is in the graph.
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
    ]
)
