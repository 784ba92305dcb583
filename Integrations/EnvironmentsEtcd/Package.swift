// swift-tools-version:6.2
import PackageDescription

// Fleet mode: one configuration in etcd below each host's files, live through a watch
// (EnvironmentsEtcd); `envctl-fleet`, the fleet's commands (`envctl publish`, `envctl fleet
// status`, which envctl runs from beside it or from PATH); and `example-fleet-daemon`. A package
// of its own, so that no user of swift-environments resolves or builds swift-nio, BoringSSL or
// AsyncHTTPClient: only those who run a fleet do.
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let environments = Target.Dependency.product(name: "Environments", package: "swift-environments")
let daemon = Target.Dependency.product(name: "EnvironmentsDaemon", package: "swift-environments")
/// What this package shares with swift-environments' own modules (`Locked`, control-character
/// escaping): `@_spi(Integrations)` declarations, no public API.
let integrationSupport = Target.Dependency.product(
    name: "_EnvironmentsIntegrationSupport", package: "swift-environments")

let package = Package(
    name: "swift-environments-etcd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "EnvironmentsEtcd", targets: ["EnvironmentsEtcd", "EtcdFleetClient"]),
        .executable(name: "envctl-fleet", targets: ["envctl-fleet"]),
        .executable(name: "example-fleet-daemon", targets: ["example-fleet-daemon"]),
    ],
    dependencies: [
        .package(name: "swift-environments", path: "../.."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // etcd's v3 JSON gateway (AsyncHTTPClient), the fleet's key layout and its local cache:
        // what the daemon's fleet mode and envctl-fleet share, without the daemon.
        .target(
            name: "EtcdFleetClient",
            dependencies: [
                environments, integrationSupport, logging,
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // Fleet configuration from etcd below the host's files, live through a watch.
        .target(
            name: "EnvironmentsEtcd",
            dependencies: [
                environments, daemon, integrationSupport, "EtcdFleetClient", logging, serviceLifecycle,
            ]
        ),
        // The etcd options, declared once for every program that takes them (envctl-fleet and
        // example-fleet-daemon).
        .target(name: "EtcdFleetArguments", dependencies: ["EtcdFleetClient", argumentParser]),
        // The fleet's commands: `envctl publish` and `envctl fleet …` run it; `envctl show`
        // and its kin run `envctl-fleet documents` for the fleet's documents below the files.
        .executableTarget(
            name: "envctl-fleet",
            dependencies: [
                environments, integrationSupport, "EtcdFleetArguments", "EtcdFleetClient", argumentParser,
            ]
        ),
        // The example daemon in fleet mode.
        .executableTarget(
            name: "example-fleet-daemon",
            dependencies: [
                environments, "EnvironmentsEtcd", "EtcdFleetArguments", "EtcdFleetClient",
                .product(name: "_ExampleDaemonKit", package: "swift-environments"),
                argumentParser,
            ],
            exclude: ["Info.plist"],
            plugins: [.plugin(name: "EmbedInfoPlist", package: "swift-environments")]
        ),
        // A real etcd cluster on loopback ports, with TLS and users, for the etcd tests.
        .target(
            name: "EtcdTestSupport",
            dependencies: [
                "EtcdFleetClient", logging,
                .product(name: "_EnvironmentsTestSupport", package: "swift-environments"),
            ],
            path: "Tests/EtcdTestSupport"
        ),
        // The fleet's key layout and documents, without etcd.
        .testTarget(name: "EtcdFleetClientTests", dependencies: ["EtcdFleetClient", environments, integrationSupport]),
        // The etcd options, as a command line gives them.
        .testTarget(
            name: "EtcdFleetArgumentsTests", dependencies: ["EtcdFleetArguments", "EtcdFleetClient", argumentParser]),
        // Against a real three-member etcd cluster (Debian's etcd-server), started by the tests.
        .testTarget(
            name: "EnvironmentsEtcdTests",
            dependencies: [
                "EnvironmentsEtcd", "EtcdFleetClient", "EtcdTestSupport", environments, daemon, integrationSupport,
                .product(name: "_EnvironmentsTestSupport", package: "swift-environments"),
                logging, serviceLifecycle,
            ]
        ),
    ]
)
