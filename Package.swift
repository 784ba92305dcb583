// swift-tools-version:6.2
import PackageDescription

/// Linux-only pieces (libsystemd, inotify) are built only on Linux, so the core
/// `Environments` library stays portable and builds on macOS too.
let linux = TargetDependencyCondition.when(platforms: [.linux])

/// A product that only the trait `trait` brings in: without it, the package that holds the
/// product is not even resolved. One trait per condition (see `traits:` below).
func only(_ trait: String, _ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: [trait]))
}

/// The products most targets use.
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")

/// What a daemon's program is made of: the library, the daemon's service, systemd, its options
/// and its logging (ExampleDaemonKit and the example daemons).
let daemonProgram: [Target.Dependency] = [
    "Environments", "EnvironmentsDaemon", "SystemdSupport", argumentParser, logging, serviceLifecycle,
]

/// An example daemon's executable, with its Info.plist embedded.
func exampleDaemon(_ name: String, dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name, dependencies: daemonProgram + dependencies, exclude: ["Info.plist"],
        plugins: [.plugin(name: "EmbedInfoPlist")])
}

let package = Package(
    name: "swift-environments",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Environments", targets: ["Environments"]),
        .library(name: "EnvironmentsDaemon", targets: ["EnvironmentsDaemon"]),
        .library(name: "SystemdSupport", targets: ["SystemdSupport"]),
        .library(name: "EnvironmentsEditing", targets: ["EnvironmentsEditing"]),
        .executable(name: "envctl", targets: ["envctl"]),
        .executable(name: "example-daemon", targets: ["example-daemon"]),
        .plugin(name: "EmbedInfoPlist", targets: ["EmbedInfoPlist"]),
        // Behind the trait "Fleet": fleet mode (etcd), its commands and its example daemon.
        .library(name: "EnvironmentsEtcd", targets: ["EnvironmentsEtcd", "EtcdFleetClient"]),
        .executable(name: "envctl-fleet", targets: ["envctl-fleet"]),
        .executable(name: "example-fleet-daemon", targets: ["example-fleet-daemon"]),
        .executable(name: "fleet-benchmark", targets: ["fleet-benchmark"]),
        // Behind the trait "SwiftConfiguration": a live ConfigProvider for apple/swift-configuration.
        .library(name: "EnvironmentsConfiguration", targets: ["EnvironmentsConfiguration"]),
        // Behind the trait "Vapor": Vapor 4 applications.
        .library(name: "EnvironmentsVapor", targets: ["EnvironmentsVapor"]),
    ],
    // What only some users need, each behind a trait of its own, none on by default: a package
    // that enables none resolves none of their dependencies (SE-0450). Each dependency below is
    // guarded by one trait alone (SwiftPM 6.2 reads a condition naming several as all-of, 6.3
    // as any-of). A module built without its trait is empty but for a declaration that says
    // which trait to enable; an executable says so when run.
    traits: [
        .trait(
            name: "Fleet",
            description: "Fleet mode: one configuration in etcd below each host's files (EnvironmentsEtcd, "
                + "envctl-fleet, example-fleet-daemon); resolves grpc-swift 2, its NIO transport, swift-protobuf, "
                + "swift-nio and swift-nio-ssl."),
        .trait(
            name: "SwiftConfiguration",
            description: "EnvironmentsConfiguration, a live ConfigProvider for apple/swift-configuration."),
        .trait(name: "Vapor", description: "EnvironmentsVapor, for Vapor 4 applications; resolves Vapor."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // The reload metrics' API (CoreMetrics); the application picks the backend.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // Trait "Fleet" only: etcd's gRPC API (the code generated from its .proto files is
        // committed: scripts/generate-etcd-grpc.sh).
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
        // None of its traits: the default BinaryDelimitedStreams imports full Foundation (ICU) into
        // SwiftProtobuf, so into every fleet daemon; grpc-swift-protobuf opts out the same way.
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0", traits: []),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Trait "SwiftConfiguration" only; none of its own traits (the provider needs none).
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        // Trait "Vapor" only.
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        // Escapes control characters in text for terminals, log lines and the journal's stream.
        .target(name: "TextEscaping"),
        // The one loop that writes bytes whole to a file descriptor (partial writes, EINTR).
        .target(name: "FileDescriptorWriting"),
        // JSON values and their text (RFC 8259), read and written without full Foundation: the
        // varlink parameters, `envctl --json`, and the JSON Schema of a declaration.
        .target(name: "JSONText", dependencies: ["TextEscaping"]),
        // The one lock type (`Locked`, a pthread mutex that ThreadSanitizer follows, fork-safe
        // on request): every module that shares state between threads uses it. The only other
        // mutex is here too: `ForkSafeLocks`' own, held across fork() (see Architecture).
        .target(name: "Locking"),
        // The general bridges between blocking threads and async code: a thread of its own
        // awaited or joined (`DedicatedThread`), async work waited for from synchronous code
        // (`TaskWaiter`), the pipe that wakes a thread blocked in poll(2) (`WakeupPipe`), and
        // blocking jobs in order on a serial queue, each awaited (`SerialWorker`). The article
        // Architecture lists the few others, each made for one hand-off (`BatchMailbox`...).
        .target(name: "ThreadBridge", dependencies: ["Locking"]),
        // The portable core: Environments.plist, layering, interpolation, snapshots.
        .target(
            name: "Environments",
            dependencies: ["Locking", "TextEscaping", "JSONText", "FileDescriptorWriting", logging]
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
                "TextEscaping", "FileDescriptorWriting", .target(name: "CSystemd", condition: linux), logging,
            ]
        ),
        // A small inotify wrapper and a debounced file watcher.
        .target(
            name: "FileWatching",
            dependencies: ["Locking", "ThreadBridge", logging]
        ),
        // Varlink (systemd's IPC) over Unix sockets, knowing nothing of configuration: messages,
        // their NUL framing, the encoder of their parameters into JSON trees, the peer's
        // credentials (SO_PEERCRED), and a blocking client for command-line tools.
        .target(name: "Varlink", dependencies: ["TextEscaping", "JSONText"]),
        // The control interface (io.swiftenvironments.Configuration): its description and the
        // records of its calls and replies, where a daemon's socket is, and whether the daemon
        // that wrote a state file still runs. Shared by the daemon and envctl, without the rest
        // of either (the core for its names and errors).
        .target(name: "EnvironmentsControl", dependencies: ["Environments", "Varlink", "JSONText"]),
        // Counts SIGHUP from before main (a handler a C constructor installs; nothing blocks
        // it), so a reload during start-up never kills a daemon, and it reloads once when ready.
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
                "ThreadBridge",
                "CEarlySignals",
                "Varlink",
                "JSONText",
                "TextEscaping",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                logging,
                serviceLifecycle,
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The safe-editing engine: a drop-in changed under its directory's lock, checked as the
        // daemon builds it (every environment, shadowed and undeclared keys), replaced atomically
        // with its owner, mode and ACLs; changes across files in one transaction. envctl's set,
        // unset, edit, migrate and credential set write through it; other tools through
        // ConfigurationEditor.
        .target(
            name: "EnvironmentsEditing",
            dependencies: ["Environments", "TextEscaping", "FileDescriptorWriting", logging]),
        .executableTarget(
            name: "envctl",
            dependencies: [
                "Locking",
                // Not EnvironmentsDaemon: envctl must not run the daemon's pre-main SIGHUP handler.
                "Environments",
                "EnvironmentsControl",
                "EnvironmentsEditing",
                // The mount table: which configuration extension (systemd-confext) a file is from.
                "FileWatching",
                // The journal's reader (envctl history); no daemon code.
                "SystemdSupport",
                "TextEscaping",
                "ThreadBridge",
                "Varlink",
                "JSONText",
                "FileDescriptorWriting",
                argumentParser,
            ]
        ),
        // What the two example daemons share: their options, rules, built-in configuration, start and work.
        .target(
            name: "ExampleDaemonKit",
            dependencies: daemonProgram + [.product(name: "UnixSignals", package: "swift-service-lifecycle")]),
        // The README's first command: the library, systemd and its control socket, no fleet.
        exampleDaemon("example-daemon", dependencies: ["ExampleDaemonKit"]),
        // Fleet mode (trait "Fleet"; without it these modules are empty and the executables say
        // which trait to enable). etcd's v3 gRPC API (grpc-swift 2), the fleet's key
        // layout and its local cache: what the daemon's fleet mode and envctl-fleet share.
        .target(
            name: "EtcdFleetClient",
            dependencies: [
                "Environments", "EnvironmentsControl", "Locking", logging,
                only("Fleet", "GRPCCore", "grpc-swift-2"),
                only("Fleet", "GRPCNIOTransportHTTP2Posix", "grpc-swift-nio-transport"),
                only("Fleet", "GRPCProtobuf", "grpc-swift-protobuf"),
                only("Fleet", "SwiftProtobuf", "swift-protobuf"),
                only("Fleet", "NIOCore", "swift-nio"),
                only("Fleet", "NIOSSL", "swift-nio-ssl"),
            ],
            // etcd's .proto files, trimmed to what the client calls: the source of Generated/*.swift.
            exclude: ["Generated/Protos"]
        ),
        // Fleet configuration from etcd below the host's files, live through a watch.
        .target(
            name: "EnvironmentsEtcd",
            dependencies: [
                "Environments", "EnvironmentsControl", "EnvironmentsDaemon", "EtcdFleetClient", "Locking", logging,
                serviceLifecycle, .product(name: "CoreMetrics", package: "swift-metrics"),
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
                "Environments", "EnvironmentsControl", "EtcdFleetArguments", "EtcdFleetClient", "Locking",
                "TextEscaping", "ThreadBridge", argumentParser,
            ]
        ),
        // The example daemon in fleet mode.
        exampleDaemon(
            "example-fleet-daemon",
            dependencies: ["ExampleDaemonKit", "EnvironmentsEtcd", "EtcdFleetArguments", "EtcdFleetClient"]),
        // Fleet mode at scale (Benchmarks/README.md): thousands of hosts' watches (this client's,
        // a sample of them whole EnvironmentServices, and bare gRPC ones) on a local etcd cluster
        // and the grpc-proxies it starts. In this package, not the Benchmarks package, because
        // it drives the client's package API (FleetBenchmarkSupport): the fleet's watch alone, a
        // bare watch made with the generated stubs, the publishing transaction. The Benchmarks
        // package builds it by name from its release graph.
        .executableTarget(
            name: "fleet-benchmark",
            dependencies: [
                "Environments", "EnvironmentsDaemon", "EnvironmentsEtcd", "EtcdFleetClient", "Locking",
                "SystemdSupport", argumentParser, logging, serviceLifecycle,
            ]
        ),
        // A live ConfigProvider for apple/swift-configuration (trait "SwiftConfiguration").
        .target(
            name: "EnvironmentsConfiguration",
            dependencies: [
                "Environments", "Locking", only("SwiftConfiguration", "Configuration", "swift-configuration"),
            ]
        ),
        // Vapor 4 applications (trait "Vapor"): the service with the application's lifecycle.
        .target(
            name: "EnvironmentsVapor",
            dependencies: [
                "Environments", "EnvironmentsDaemon", "Locking", "ThreadBridge", logging, serviceLifecycle,
                only("Vapor", "Vapor", "vapor"),
            ]
        ),
        // Embeds an application's Info.plist into its executable at build time.
        .plugin(
            name: "EmbedInfoPlist",
            capability: .buildTool(),
            dependencies: ["EmbedInfoPlistTool"]
        ),
        // Its Info.plist reader is the library's own, compiled from the same files (links in
        // InfoPlistReader/), not the whole library: SwiftPM builds a plugin's tool first, so a
        // dependency on Environments would compile the library once more before every build.
        .executableTarget(name: "EmbedInfoPlistTool", dependencies: ["TextEscaping", "FileDescriptorWriting"]),
        .testTarget(
            name: "EnvironmentsTests",
            dependencies: ["Environments", "Locking", "TestSupport", logging]
        ),
        .testTarget(
            name: "SystemdSupportTests",
            dependencies: ["SystemdSupport", "TestSupport", "TextEscaping", logging]
        ),
        .testTarget(name: "FileWatchingTests", dependencies: ["FileWatching", "Locking", "ThreadBridge", logging]),
        // The lock type and the escaping of control characters, each on its own.
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "ThreadBridgeTests", dependencies: ["ThreadBridge", "Locking"]),
        .testTarget(name: "TextEscapingTests", dependencies: ["TextEscaping"]),
        .testTarget(name: "FileDescriptorWritingTests", dependencies: ["FileDescriptorWriting", "TestSupport"]),
        // The example daemons' shared kit: command line, options, built-in configuration.
        .testTarget(
            name: "ExampleDaemonKitTests", dependencies: ["ExampleDaemonKit", "Environments", argumentParser]),
        // The daemon's library, in the test process and through the example daemon as a process.
        .testTarget(
            name: "EnvironmentsDaemonTests",
            dependencies: [
                "EnvironmentsDaemon", "Environments", "EnvironmentsControl", "Locking", "SystemdSupport", "TestSupport",
                "Varlink",
                "JSONText",
                logging, serviceLifecycle,
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        // envctl: its own code against real files, and its commands as a process against files
        // and running daemons (the example daemon, or an EnvironmentService in the test process).
        .testTarget(
            name: "EnvctlTests",
            dependencies: [
                "envctl", "Environments", "EnvironmentsControl", "EnvironmentsDaemon", "EnvironmentsEditing",
                "TestSupport",
                "Varlink",
                "JSONText",
                logging,
            ]
        ),
        // A source of configuration written against the public API alone, as another package
        // writes one (no @testable, no package symbol): key-per-file values, as Kubernetes and
        // systemd credentials mount them, through a real EnvironmentService.
        .testTarget(
            name: "SourceSeamTests",
            dependencies: ["Environments", "EnvironmentsDaemon", "SystemdSupport", logging]
        ),
        // The editing engine through its API (ConfigurationEditor) and its parts, on real files.
        .testTarget(
            name: "EnvironmentsEditingTests", dependencies: ["EnvironmentsEditing", "Environments", "TestSupport"]),
        // Messages, framing and the JSON tree, against Foundation's JSON.
        .testTarget(name: "VarlinkTests", dependencies: ["Varlink", "JSONText"]),
        // The control interface's text against its records.
        .testTarget(name: "EnvironmentsControlTests", dependencies: ["EnvironmentsControl", "Varlink", "JSONText"]),
        // The Info.plist tool as the plugin runs it.
        .testTarget(name: "EmbedInfoPlistToolTests", dependencies: ["EmbedInfoPlistTool", "TestSupport"]),
        // A real etcd cluster on loopback ports, with TLS and users, for the etcd tests.
        .target(
            name: "EtcdTestSupport", dependencies: ["EtcdFleetClient", "TestSupport", logging],
            path: "Tests/EtcdTestSupport"),
        // The fleet's key layout and documents, without etcd (TestSupport: the sample reload
        // reports that every surface of a reload is held to).
        .testTarget(
            name: "EtcdFleetClientTests",
            dependencies: ["EtcdFleetClient", "Environments", "EnvironmentsControl", "TestSupport"]),
        // The etcd options, as a command line gives them.
        .testTarget(
            name: "EtcdFleetArgumentsTests", dependencies: ["EtcdFleetArguments", "EtcdFleetClient", argumentParser]),
        // Against a real three-member etcd cluster (Debian's etcd-server), started by the tests.
        .testTarget(
            name: "EnvironmentsEtcdTests",
            dependencies: [
                "EnvironmentsEtcd", "EtcdFleetClient", "EtcdTestSupport", "Environments", "EnvironmentsControl",
                "EnvironmentsDaemon", "Locking", "SystemdSupport", "TestSupport", logging, serviceLifecycle,
            ]
        ),
        // The provider, with swift-configuration's own compatibility suite.
        .testTarget(
            name: "EnvironmentsConfigurationTests",
            dependencies: [
                "EnvironmentsConfiguration", "Environments", "EnvironmentsDaemon", "Locking", "SystemdSupport",
                "TestSupport", logging,
                only("SwiftConfiguration", "Configuration", "swift-configuration"),
                only("SwiftConfiguration", "ConfigurationTesting", "swift-configuration"),
            ]
        ),
        // A real Vapor application on real files and its control socket.
        .testTarget(
            name: "EnvironmentsVaporTests",
            dependencies: [
                "EnvironmentsVapor", "Environments", "EnvironmentsDaemon",
                only("Vapor", "Vapor", "vapor"), only("Vapor", "VaporTesting", "vapor"),
            ]
        ),
        // What the suites share: the built executables and running them, a service in the test
        // process with its control socket, the example daemon as a process (DaemonHarness), an
        // example configuration directory.
        .target(
            name: "TestSupport",
            dependencies: [
                "Environments", "EnvironmentsControl", "EnvironmentsDaemon", "SystemdSupport", "Varlink",
                "JSONText", logging,
            ],
            path: "Tests/TestSupport"
        ),
    ]
)

// Every Swift target: imports say what each file uses, a public API cannot leak another module's
// types by accident (InternalImportsByDefault, MemberImportVisibility), and existential types
// are spelled `any` (ExistentialAny), as swift-configuration and Hummingbird build.
for target in package.targets
where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("ExistentialAny"),
        ]
}
