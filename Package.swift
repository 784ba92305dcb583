// swift-tools-version:6.2
import PackageDescription

/// Linux-only pieces (libsystemd, inotify) are built only on Linux, so the core
/// `Environments` library stays portable and builds on macOS too.
let linux = TargetDependencyCondition.when(platforms: [.linux])

let package = Package(
    name: "swift-environments",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Environments", targets: ["Environments"]),
        .library(name: "EnvironmentsDaemon", targets: ["EnvironmentsDaemon"]),
        .library(name: "EnvironmentsConfiguration", targets: ["EnvironmentsConfiguration"]),
        .library(name: "EnvironmentsEtcd", targets: ["EnvironmentsEtcd", "EtcdFleetClient"]),
        .library(name: "SystemdSupport", targets: ["SystemdSupport"]),
        .executable(name: "envctl", targets: ["envctl"]),
        .executable(name: "example-daemon", targets: ["example-daemon"]),
        .executable(name: "example-fleet-daemon", targets: ["example-fleet-daemon"]),
        // A product only so that the Benchmarks package's release graph (scripts/build-release.sh)
        // can build it. It lives here because it drives the fleet's etcd client (EtcdClient, whose
        // API is `package`) and starts etcd with EtcdTestSupport (a target, not a product): no
        // other package can reach either.
        .executable(name: "fleet-benchmark", targets: ["fleet-benchmark"]),
        .plugin(name: "EmbedInfoPlist", targets: ["EmbedInfoPlist"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The reload metrics' API (CoreMetrics); the application picks the backend.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // Built only for `EnvironmentsConfiguration` (and its tests): an application that
        // links `Environments` alone never compiles it. No traits: the provider needs none.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        // Built only for the etcd fleet mode (`EnvironmentsEtcd`, envctl, example-fleet-daemon):
        // `swift run example-daemon` never compiles them.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // `swift package generate-documentation` (scripts/build-docs.sh); a plugin, never linked.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Escapes control characters in text for terminals, log lines and the journal's stream.
        .target(name: "TextEscaping"),
        // The one lock type (`Locked`, a pthread mutex that ThreadSanitizer follows, fork-safe
        // on request): every module that shares state between threads uses it.
        .target(name: "Locking"),
        // The portable core: Environments.plist, layering, interpolation, snapshots.
        .target(
            name: "Environments",
            dependencies: ["Locking", "TextEscaping", .product(name: "Logging", package: "swift-log")]
        ),
        // libsystemd (sd_notify, sd_journal_sendv), Linux only.
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // sd_notify, the watchdog, a journald LogHandler, the journal's reader, and the
        // MESSAGE_IDs of configuration events (systemd/environments.catalog).
        .target(
            name: "SystemdSupport",
            dependencies: [
                "TextEscaping",
                .target(name: "CSystemd", condition: linux),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A small inotify wrapper and a debounced file watcher.
        .target(
            name: "FileWatching",
            dependencies: ["Locking", .product(name: "Logging", package: "swift-log")]
        ),
        // Varlink (systemd's IPC) over Unix sockets, knowing nothing of configuration: messages,
        // their NUL framing, the JSON tree of their parameters and its encoder, the peer's
        // credentials (SO_PEERCRED), and a blocking client for command-line tools.
        .target(name: "Varlink", dependencies: ["TextEscaping"]),
        // The control interface (io.swiftenvironments.Configuration): its description and the
        // records of its calls and replies, where a daemon's socket is, and whether the daemon
        // that wrote a state file still runs. Shared by the daemon and envctl, without the rest
        // of either (the core for its names and errors).
        .target(name: "EnvironmentsControl", dependencies: ["Environments", "Varlink"]),
        // Blocks SIGHUP before main, so a reload during start-up never kills a daemon.
        .target(name: "CEarlySignals"),
        // Ties it together for long-running services: reloads, signals, a Service.
        .target(
            name: "EnvironmentsDaemon",
            dependencies: [
                "Locking",
                "Environments",
                "EnvironmentsControl",
                "SystemdSupport",
                "FileWatching",
                "CEarlySignals",
                "Varlink",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // A live ConfigProvider for apple/swift-configuration over an Environment.
        .target(
            name: "EnvironmentsConfiguration",
            dependencies: [
                "Locking",
                "Environments",
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // etcd's v3 JSON gateway (AsyncHTTPClient), the fleet's key layout and its local cache:
        // what the daemon's fleet mode and envctl share, without the daemon.
        .target(
            name: "EtcdFleetClient",
            dependencies: [
                "Locking",
                "Environments",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Fleet configuration from etcd below the host's files, live through a watch.
        .target(
            name: "EnvironmentsEtcd",
            dependencies: [
                "Locking",
                "Environments",
                "EnvironmentsDaemon",
                "EtcdFleetClient",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "envctl",
            dependencies: [
                "Locking",
                // Not EnvironmentsDaemon: envctl must not run the daemon's pre-main SIGHUP handler.
                "Environments",
                "EnvironmentsControl",
                "EtcdFleetArguments",
                "EtcdFleetClient",
                // The mount table: which configuration extension (systemd-confext) a file is from.
                "FileWatching",
                // The journal's reader (envctl history); no daemon code.
                "SystemdSupport",
                "TextEscaping",
                "Varlink",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The etcd options, declared once for every program that takes them (envctl and
        // example-fleet-daemon).
        .target(
            name: "EtcdFleetArguments",
            dependencies: [
                "EtcdFleetClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What the two example daemons share: their options, rules, built-in configuration, start and work.
        .target(
            name: "ExampleDaemonKit",
            dependencies: [
                "Environments",
                "EnvironmentsDaemon",
                "SystemdSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The README's first command: the library, systemd and its control socket, no fleet.
        .executableTarget(
            name: "example-daemon",
            dependencies: [
                "Environments",
                "EnvironmentsDaemon",
                "ExampleDaemonKit",
                "SystemdSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Info.plist"],
            plugins: [.plugin(name: "EmbedInfoPlist")]
        ),
        // The same daemon in fleet mode (etcd, through AsyncHTTPClient).
        .executableTarget(
            name: "example-fleet-daemon",
            dependencies: [
                "Environments",
                "EnvironmentsDaemon",
                "EnvironmentsEtcd",
                "EtcdFleetArguments",
                "EtcdFleetClient",
                "ExampleDaemonKit",
                "SystemdSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Info.plist"],
            plugins: [.plugin(name: "EmbedInfoPlist")]
        ),
        // Fleet mode's benchmark: ms from a `put` in etcd until 20 environments in one process
        // applied it, beside a bare watch (the floor), on a local etcd cluster it starts
        // (Benchmarks/README.md).
        .executableTarget(
            name: "fleet-benchmark",
            dependencies: [
                "Environments",
                "EnvironmentsDaemon",
                "EnvironmentsEtcd",
                "EtcdFleetClient",
                "EtcdTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Benchmarks/Sources/fleet-benchmark"
        ),
        // Embeds an application's Info.plist into its executable at build time.
        .plugin(
            name: "EmbedInfoPlist",
            capability: .buildTool(),
            dependencies: ["EmbedInfoPlistTool"]
        ),
        .executableTarget(name: "EmbedInfoPlistTool", dependencies: ["Environments"]),
        .testTarget(
            name: "EnvironmentsTests",
            dependencies: ["Environments", "Locking", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "SystemdSupportTests",
            dependencies: ["SystemdSupport", "TextEscaping", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "FileWatchingTests", dependencies: ["FileWatching", "Locking"]),
        .testTarget(
            name: "EnvironmentsConfigurationTests",
            dependencies: [
                "EnvironmentsConfiguration", "Environments", "EnvironmentsDaemon", "FileWatching", "Locking",
                "SystemdSupport", "TestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ConfigurationTesting", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The daemon's library, in the test process and through the example daemon as a process.
        .testTarget(
            name: "EnvironmentsDaemonTests",
            dependencies: [
                "EnvironmentsDaemon", "Environments", "EnvironmentsControl", "Locking", "SystemdSupport", "TestSupport",
                "Varlink",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // envctl: its own code against real files, and its commands as a process against files
        // and running daemons (the example daemon, or an EnvironmentService in the test process).
        .testTarget(
            name: "EnvctlTests",
            dependencies: [
                "envctl", "Environments", "EnvironmentsControl", "EnvironmentsDaemon", "TestSupport", "Varlink",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Messages, framing and the JSON tree, against Foundation's JSON.
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink"]),
        // The control interface's text against its records.
        .testTarget(name: "EnvironmentsControlTests", dependencies: ["EnvironmentsControl", "Varlink"]),
        // The Info.plist tool as the plugin runs it.
        .testTarget(name: "EmbedInfoPlistToolTests", dependencies: ["EmbedInfoPlistTool", "TestSupport"]),
        // What the suites share: the built executables and running them, a service in the test
        // process with its control socket, the example daemon as a process (DaemonHarness), an
        // example configuration directory.
        .target(
            name: "TestSupport",
            dependencies: [
                "Environments", "EnvironmentsDaemon", "Varlink", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport"
        ),
        // A real etcd cluster on loopback ports, for the etcd tests and fleet-benchmark.
        .target(
            name: "EtcdTestSupport",
            dependencies: ["EtcdFleetClient", "TestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/EtcdTestSupport"
        ),
        // The fleet's key layout and documents, without etcd.
        .testTarget(name: "EtcdFleetClientTests", dependencies: ["EtcdFleetClient"]),
        // Against a real three-member etcd cluster (Debian's etcd-server), started by the tests.
        .testTarget(
            name: "EnvironmentsEtcdTests",
            dependencies: [
                "EnvironmentsEtcd", "EtcdFleetClient", "EtcdTestSupport", "Environments", "EnvironmentsDaemon",
                "Locking", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)
