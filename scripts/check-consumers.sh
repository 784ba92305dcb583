#!/bin/bash
# What a user of each product family gets by URL (issue 52.5): scratch packages that depend on
# a clone of this tree, tagged with the release, by `file://` URL only, as a user's manifest
# names the repository by URL and version.
#
#   scripts/check-consumers.sh [CONSUMER...]     all of them, or some: core vapor fleet
#                                                configuration twice untraited
#
# Clones this repository (its committed HEAD: uncommitted changes are not in the clone) into a
# temporary directory and tags the clone with LibraryVersion.current, as
# scripts/check-dependency-line.sh does. Each consumer is a package whose manifest says
# `.package(url: "file://CLONE", from: "VERSION", traits: [...])`, the line the docs give:
#
#   core          `Environments` alone, no trait: `swift package resolve` only (the build of
#                 the core is scripts/check-dependency-line.sh's); at most 7 packages resolved,
#                 swift-environments included (CHECK_CONSUMERS_MAX_CORE), else it fails and
#                 lists them.
#   vapor         `EnvironmentsVapor`, traits: ["Vapor"]: a main that calls
#                 `app.bootstrapEnvironments(_:)` and reads `app.environments` and
#                 `req.environments`; built.
#   fleet         `EnvironmentsEtcd`, traits: ["Fleet"]: a main that builds an
#                 `EtcdConfiguration` and names `EtcdFleet.connect`; built.
#   configuration `EnvironmentsConfiguration`, traits: ["SwiftConfiguration"]: a main that makes a
#                 `ConfigReader` over an `EnvironmentProvider` and reads through it; built, run.
#   twice         a graph that asks for swift-environments twice: the consumer with
#                 traits: ["Fleet"] and a local package (a library on `Environments`, by the same
#                 URL, no trait) that it depends on by path. As written, SwiftPM 6.3.1 cannot
#                 resolve it (the trait's dependencies unresolved): checked, and said when a
#                 SwiftPM can. Then with PackageTraits.md's workaround (the consumer names
#                 grpc-swift-2, grpc-swift-nio-transport, grpc-swift-protobuf, swift-protobuf,
#                 swift-nio and swift-nio-ssl too): resolved, built, run.
#   untraited     `EnvironmentsEtcd` without the trait: the build must fail with the module's
#                 own message, which names the line to write (`traits: ["Fleet"]`).
#
# Prints, per consumer, the packages resolved (the pins of its Package.resolved, swift-environments
# included) and the seconds its resolve and its build took. A consumer that does not resolve or
# build (or, untraited, does not fail as it should) fails the script, with its log's end.
#
# The consumers and their scratch paths are kept between runs, in CHECK_CONSUMERS_DIR: by default
# $SWIFT_ENVIRONMENTS_SCRATCH/consumers when it is set (.ci/run's build cache), else
# .build-consumers in this repository. One scratch path per set of checkouts, so that each graph
# finds every run what it left: in one scratch path for all (until 2026-12-02), resolving one
# consumer's graph removed checkouts another's uses, a checkout made again is compiled again
# whole, and every CI run compiled Vapor's graph (499 s in that day's landing run) and the
# fleet's (twice: 333 s, after configuration) again.
#   scratch                vapor (swift-nio, BoringSSL, AsyncHTTPClient, Vapor)
#   scratch-fleet          fleet and twice (swift-nio, BoringSSL, grpc-swift, swift-protobuf)
#   scratch-configuration  configuration (swift-configuration)
#   scratch-light          core and untraited (the core's 6 packages)
# Twice as written resolves in a scratch path of its own (scratch-twice-as-written): its failed
# resolution would remove the fleet's checkouts. SwiftPM's shared package cache is used (the
# clone's own entry is removed at exit).
#
# Time, measured 2026-12-02 on this project's 2-core VM (Swift 6.3.1), load 9 to 12 from other
# builds beside it. Cold (empty CHECK_CONSUMERS_DIR, packages already in SwiftPM's cache), about
# 55 minutes: core 5-15 s (resolve only), untraited 283 s, configuration 163 s, fleet 1142 s,
# vapor 1635 s (Vapor's graph: 2,500 build steps), twice a minute or two in fleet's scratch path.
# Warm, one commit later (each scratch path recompiles swift-environments' modules only):
# fleet 120 s, core 5 s; expect 2-3 minutes for vapor and a minute or two for each other one.
# In CI, give it the build cache (.ci/run's use_build_cache does: $SWIFT_ENVIRONMENTS_SCRATCH),
# or every run is a cold one.
set -euo pipefail
export LC_NUMERIC=C
cd "$(dirname "$0")/.."
root="$PWD"
name="scripts/check-consumers.sh"
all=(core vapor fleet configuration twice untraited)
if (($#)); then
    for consumer in "$@"; do
        [[ " ${all[*]} " == *" $consumer "* ]] || { echo "usage: $name [${all[*]}]..." >&2; exit 2; }
    done
    consumers=("$@")
else
    consumers=("${all[@]}")
fi
# Beside the other builds: in CI's build cache when .ci/run set one (scripts/lib/scratch.sh).
dir="${CHECK_CONSUMERS_DIR:-${SWIFT_ENVIRONMENTS_SCRATCH:+$SWIFT_ENVIRONMENTS_SCRATCH/consumers}}"
dir="${dir:-$root/.build-consumers}"
max_core="${CHECK_CONSUMERS_MAX_CORE:-7}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/check-consumers.XXXXXX")"

# At exit: the temporary clone, and the entry SwiftPM's shared cache made for its URL (a new
# URL each run: a tag moved at the same URL is a fingerprint conflict for SwiftPM).
cleanup() {
    local cache="${XDG_CACHE_HOME:-$HOME/.cache}/org.swift.swiftpm/repositories" entry
    for entry in "$cache"/swift-environments-*; do
        [[ -d $entry ]] || continue
        [[ $(git -C "$entry" config --get remote.origin.url 2>/dev/null) == "file://$work/"* ]] && rm -rf "$entry"
    done
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "$name: $*" >&2
    exit 1
}
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# The identities pinned in a Package.resolved.
pins() { sed -n 's/^ *"identity" *: *"\([^"]*\)".*/\1/p' "$1" | sort; }

clone="$work/swift-environments"
git clone --quiet --no-hardlinks "$root" "$clone" || fail "cannot clone $root"
version="$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' "$clone/Sources/Environments/Support/LibraryVersion.swift")"
[[ -n $version ]] || fail "no LibraryVersion.current in Sources/Environments/Support/LibraryVersion.swift"
git -C "$clone" tag -f "$version" >/dev/null
url="file://$clone"
tools="$(head -1 "$clone/Package.swift")"
echo "   a clone of $(git -C "$clone" rev-parse --short HEAD), tagged $version, as $url"

# The line a user writes, with traits (a Swift array literal, "" for none).
line() { # traits
    if [[ -n $1 ]]; then
        echo ".package(url: \"$url\", from: \"$version\", traits: $1)"
    else
        echo ".package(url: \"$url\", from: \"$version\")"
    fi
}

# Writes consumer $1's package, `$1-consumer` (a package named as one of its dependencies, vapor,
# would be taken for it), with one executable target of the same name: Package.swift from
# standard input's `dependencies:` and `targets:` lines, and its main.swift from $2.
package() { # consumer main.swift-text
    local path="$dir/$1-consumer"
    mkdir -p "$path/Sources/$1-consumer"
    {
        echo "$tools"
        echo "import PackageDescription"
        echo
        echo "let package = Package("
        echo "    name: \"$1-consumer\","
        echo "    platforms: [.macOS(.v15)],"
        cat
        echo ")"
    } >"$path/Package.swift"
    printf '%s\n' "$2" >"$path/Sources/$1-consumer/main.swift"
    rm -f "$path/Package.resolved"
}

summary=()
# Consumer $1's scratch path: one per set of checkouts (above).
scratch() { # consumer
    case "$1" in
    vapor) echo "$dir/scratch" ;;
    fleet | twice) echo "$dir/scratch-fleet" ;;
    configuration) echo "$dir/scratch-configuration" ;;
    *) echo "$dir/scratch-light" ;;
    esac
}
# Resolves consumer $1 (in its scratch path) and prints what it resolved; sets $resolved_pins.
resolve() { # consumer
    local path="$dir/$1-consumer" start end
    start=$EPOCHREALTIME
    if ! swift package --package-path "$path" --scratch-path "$(scratch "$1")" resolve >"$dir/$1.resolve.log" 2>&1; then
        tail -30 "$dir/$1.resolve.log" >&2
        fail "$1: swift package resolve fails (log above, all of it in $dir/$1.resolve.log)"
    fi
    end=$EPOCHREALTIME
    mapfile -t resolved_pins < <(pins "$path/Package.resolved")
    resolve_seconds="$(seconds "$start" "$end")"
    echo "   $1: ${#resolved_pins[@]} packages resolved in $resolve_seconds s: ${resolved_pins[*]}"
}
# Builds consumer $1; $2 = fail when the build is expected to fail. Sets $build_seconds.
build() { # consumer [fail]
    local path="$dir/$1-consumer" start end status=0
    start=$EPOCHREALTIME
    swift build --package-path "$path" --scratch-path "$(scratch "$1")" >"$dir/$1.build.log" 2>&1 || status=$?
    end=$EPOCHREALTIME
    build_seconds="$(seconds "$start" "$end")"
    if [[ ${2:-} != fail ]] && ((status != 0)); then
        grep -E 'error:' "$dir/$1.build.log" | head -20 >&2 || true
        tail -20 "$dir/$1.build.log" >&2
        fail "$1: swift build fails (log above, all of it in $dir/$1.build.log)"
    fi
    if [[ ${2:-} == fail ]] && ((status == 0)); then
        fail "$1: swift build succeeds where it must fail (log: $dir/$1.build.log)"
    fi
    echo "   $1: built in $build_seconds s$([[ ${2:-} == fail ]] && echo ", failing as it must")"
}
record() { # consumer what
    summary+=("$(printf '%-14s %3d packages  resolve %6s s  build %7s  %s' "$1" "${#resolved_pins[@]}" \
        "$resolve_seconds" "${build_seconds:--}${build_seconds:+ s}" "$2")")
}

core() {
    package core 'import Environments

print(Environment.shared.fetch("APIBaseUrl") as? String ?? "(no value)")' <<EOF
    dependencies: [
        $(line "")
    ],
    targets: [
        .executableTarget(name: "core-consumer", dependencies: [
            .product(name: "Environments", package: "swift-environments"),
        ]),
    ]
EOF
    resolve core
    build_seconds=""
    if ((${#resolved_pins[@]} > max_core)); then
        printf '     %s\n' "${resolved_pins[@]}" >&2
        fail "core: a package that uses Environments alone resolves ${#resolved_pins[@]} packages (above)," \
            "more than $max_core with swift-environments: a dependency only some users need belongs behind a trait"
    fi
    record core "Environments, no trait (at most $max_core)"
}

vapor() {
    package vapor 'import Environments
import EnvironmentsVapor
import Vapor

/// A Vapor application on the live configuration: nothing runs (this checks that it builds).
func configure(_ app: Application) throws {
    try app.bootstrapEnvironments(EnvironmentOptions(applicationName: "vapor-consumer"))
    app.get("greeting") { req in
        req.environments.get("Greeting", default: "Hello")
    }
    app.logger.info("greeting: \(app.environments.get("Greeting", default: "Hello"))")
}

if CommandLine.arguments.contains("serve") {
    let app = try await Application.make(.detect())
    try configure(app)
    try await app.execute()
    try await app.asyncShutdown()
}' <<EOF
    dependencies: [
        $(line '["Vapor"]'),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
    ],
    targets: [
        .executableTarget(name: "vapor-consumer", dependencies: [
            .product(name: "Environments", package: "swift-environments"),
            .product(name: "EnvironmentsVapor", package: "swift-environments"),
            .product(name: "Vapor", package: "vapor"),
        ]),
    ]
EOF
    resolve vapor
    build vapor
    record vapor 'EnvironmentsVapor, traits: ["Vapor"]'
}

# The fleet's main, for fleet and twice; $1 adds lines.
fleet_main() {
    printf '%s\n' 'import EnvironmentsEtcd
import EtcdFleetClient
import Logging
' "$1" '
/// A fleet configuration, and the call that connects (not made: no etcd here).
let configuration = EtcdConfiguration(endpoints: ["http://127.0.0.1:2379"], prefix: "/fleet/consumer/")
let connect: (EtcdConfiguration, Logger) async throws -> EtcdFleet = { try await EtcdFleet.connect($0, logger: $1) }
print("fleet at \(configuration.requestTimeout) per request")' "$2"
}

fleet() {
    package fleet "$(fleet_main "" "")" <<EOF
    dependencies: [
        $(line '["Fleet"]'),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(name: "fleet-consumer", dependencies: [
            .product(name: "EnvironmentsEtcd", package: "swift-environments"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
EOF
    resolve fleet
    build fleet
    record fleet 'EnvironmentsEtcd, traits: ["Fleet"]'
}

configuration() {
    package configuration 'import Configuration
import Environments
import EnvironmentsConfiguration

let environment = try Environment(values: ["Greeting": .string("hello")])
let reader = ConfigReader(provider: EnvironmentProvider(environment: environment))
print(reader.string(forKey: "Greeting", default: "(no value)"))' <<EOF
    dependencies: [
        $(line '["SwiftConfiguration"]'),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
    ],
    targets: [
        .executableTarget(name: "configuration-consumer", dependencies: [
            .product(name: "Environments", package: "swift-environments"),
            .product(name: "EnvironmentsConfiguration", package: "swift-environments"),
            .product(name: "Configuration", package: "swift-configuration"),
        ]),
    ]
EOF
    resolve configuration
    build configuration
    local output
    output="$("$(scratch configuration)/debug/configuration-consumer" 2>&1)" || fail "configuration: the program fails: $output"
    [[ $(tail -1 <<<"$output") == hello ]] || fail "configuration: the program read '$output', not 'hello'"
    echo "   configuration: runs, reads hello through ConfigReader"
    record configuration 'EnvironmentsConfiguration, traits: ["SwiftConfiguration"]'
}

twice() {
    # The second package: a library on the core alone, swift-environments by the same URL, no trait.
    local lib="$dir/core-user"
    mkdir -p "$lib/Sources/CoreUser"
    cat >"$lib/Package.swift" <<EOF
$tools
import PackageDescription

let package = Package(
    name: "core-user",
    platforms: [.macOS(.v15)],
    products: [.library(name: "CoreUser", targets: ["CoreUser"])],
    dependencies: [
        $(line "")
    ],
    targets: [
        .target(name: "CoreUser", dependencies: [
            .product(name: "Environments", package: "swift-environments"),
        ]),
    ]
)
EOF
    cat >"$lib/Sources/CoreUser/CoreUser.swift" <<'EOF'
public import Environments

/// A value read through the core alone.
public func greeting(in environment: Environment) -> String {
    environment.get("Greeting", default: "hello")
}
EOF
    # As a user writes it; then, if SwiftPM cannot resolve that, with PackageTraits.md's workaround.
    twice_package ""
    # In a scratch path of its own: a failed resolution in fleet's removes fleet's checkouts, and
    # the build then compiles swift-nio and BoringSSL again.
    if swift package --package-path "$dir/twice-consumer" --scratch-path "$dir/scratch-twice-as-written" resolve \
        >"$dir/twice.plain.log" 2>&1; then
        twice_plain="resolves as written"
        echo "   twice: resolves as written (PackageTraits.md's workaround for SwiftPM 6.3 is no longer needed)"
    else
        grep -q 'exhausted attempts to resolve the dependencies graph' "$dir/twice.plain.log" || {
            tail -20 "$dir/twice.plain.log" >&2
            fail "twice: as written, the graph fails to resolve other than as PackageTraits.md says (log above)"
        }
        local unresolved
        unresolved="$(sed -n "s/^\* '\([^']*\)'.*/\1/p" "$dir/twice.plain.log" | tr '\n' ' ' | sed 's/ $//')"
        twice_plain="as written, unresolved: $unresolved"
        echo "   twice: as written, SwiftPM cannot resolve it ($unresolved unresolved: the trait's" \
            "dependencies); with PackageTraits.md's workaround, the consumer names them too:"
        twice_package "$fleet_packages"
    fi
    resolve twice
    build twice
    local output
    output="$("$(scratch twice)/debug/twice-consumer" 2>&1)" || fail "twice: the program fails: $output"
    [[ $(tail -1 <<<"$output") == twice ]] || fail "twice: the program printed '$output', not 'twice' last"
    echo "   twice: runs (the fleet's types and the second package's read in one program)"
    record twice "traits: [\"Fleet\"] + a package on the core, no trait ($twice_plain)"
}

# The fleet trait's dependencies, as Package.swift names them (PackageTraits.md's workaround for a graph
# that asks for swift-environments with and without the trait).
fleet_packages='
        .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),'
# twice's package, with $1 added to its dependencies.
twice_package() { # extra-dependencies
    package twice "$(fleet_main "import CoreUser
import Environments" 'print(greeting(in: try Environment(values: ["Greeting": .string("twice")])))')" <<EOF
    dependencies: [
        $(line '["Fleet"]'),
        .package(path: "../core-user"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),$1
    ],
    targets: [
        .executableTarget(name: "twice-consumer", dependencies: [
            .product(name: "Environments", package: "swift-environments"),
            .product(name: "EnvironmentsEtcd", package: "swift-environments"),
            .product(name: "CoreUser", package: "core-user"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
EOF
}

untraited() {
    package untraited "$(fleet_main "" "")" <<EOF
    dependencies: [
        $(line ""),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(name: "untraited-consumer", dependencies: [
            .product(name: "EnvironmentsEtcd", package: "swift-environments"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
EOF
    resolve untraited
    local pin
    for pin in "${resolved_pins[@]}"; do
        case $pin in
            swift-nio | swift-nio-ssl | grpc-swift-2 | grpc-swift-nio-transport | grpc-swift-protobuf | swift-protobuf)
                fail "untraited: resolves $pin without the trait Fleet" ;;
        esac
    done
    build untraited fail
    local log="$dir/untraited.build.log"
    grep -q 'built without the trait "Fleet"' "$log" && grep -qF 'traits: ["Fleet"]' "$log" || {
        grep -E 'error:' "$log" | head -10 >&2 || true
        fail "untraited: the build fails without naming the trait: no 'built without the trait \"Fleet\"' and" \
            "'traits: [\"Fleet\"]' in $log"
    }
    echo "   untraited: fails as it must: $(grep -m1 -o "error: '[A-Za-z]*' is unavailable: .*" "$log")"
    record untraited 'EnvironmentsEtcd, no trait: fails, naming traits: ["Fleet"]'
}

start=$EPOCHREALTIME
for consumer in "${consumers[@]}"; do
    echo "== $consumer"
    build_seconds=""
    "$consumer"
done
echo "== $name: $version by file:// URL, in $(seconds "$start" "$EPOCHREALTIME") s ($(uptime | sed 's/.*load average: /load /'))"
printf '   %s\n' "${summary[@]}"
