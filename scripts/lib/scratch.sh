# Where SwiftPM builds (its --scratch-path): sourced, not run.
#
#   scratch_path FLAVOR   prints the scratch path of one build: debug (the package with every
#                         trait, with tests), tsan (the package under ThreadSanitizer, with the
#                         trait Fleet), asan (under AddressSanitizer, no trait: scripts/sanitizers.sh
#                         says why), release (the Benchmarks package's release graph,
#                         scripts/build-release.sh), consumers (scripts/check-consumers.sh's
#                         scratch packages), walk (not a scratch path but the fixed directory in which
#                         scripts/walk-getting-started.py builds the guide's greeter and envctl,
#                         each package with its own .build, so that they stay warm between runs)
#   use_build_cache DIR   (.ci/run) builds in DIR/KEY/FLAVOR from now on, when DIR can be locked
#
# By default every build is in the clone: .build, .build-tsan, .build-asan, Benchmarks/.build,
# .build-consumers and .build-walk.
#
# The build cache: a fresh clone compiles its dependencies (swift-nio, BoringSSL and
# AsyncHTTPClient for the trait Fleet, swift-configuration, Hummingbird, Vapor...) once per
# build, and that is two thirds of a debug build's time (measured: 315 s in an empty scratch
# path, 101 s in one a clone at another path had used). Scratch paths outside the clone, in
# DIR/KEY, keep the dependencies compiled between runs on one machine: the checkouts are at the
# same paths, so SwiftPM rebuilds only this repository's packages (whose sources moved with the
# clone) and what changed. KEY is a hash of the toolchain (`swift --version`) and the machine; a
# new toolchain starts a new KEY and removes the others. A fresh machine builds everything, as
# without a cache.
#
# One run at a time: a run that shared the scratch paths of another could test the other's
# build. use_build_cache holds DIR/lock (flock) on file descriptor 9 for the rest of the run;
# when another run holds it for more than ${SCRATCH_LOCK_WAIT:-60} s, this run builds in the
# clone instead, as without a cache. Remove DIR to drop the cache (it holds about 6 GB).

: "${SWIFT_ENVIRONMENTS_SCRATCH:=}"
export SWIFT_ENVIRONMENTS_SCRATCH

scratch_path() { # FLAVOR
    local root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    if [ -n "$SWIFT_ENVIRONMENTS_SCRATCH" ]; then
        echo "$SWIFT_ENVIRONMENTS_SCRATCH/$1"
        return
    fi
    case "$1" in
    debug) echo "$root/.build" ;;
    tsan | asan) echo "$root/.build-$1" ;;
    release) echo "$root/Benchmarks/.build" ;;
    consumers) echo "$root/.build-consumers" ;;
    walk) echo "$root/.build-walk" ;;
    *)
        echo "scratch_path: unknown build '$1' (debug, tsan, asan, release, consumers, walk)" >&2
        return 2
        ;;
    esac
}

use_build_cache() { # DIR
    local dir="$1" key other
    if ! mkdir -p "$dir" 2>/dev/null || ! exec 9>>"$dir/lock"; then
        echo "== build cache: $dir is not writable; building in the clone" >&2
        return 0
    fi
    if ! flock -w "${SCRATCH_LOCK_WAIT:-60}" 9; then
        exec 9>&-
        echo "== build cache: another run holds $dir/lock; building in the clone" >&2
        return 0
    fi
    key="$( (swift --version 2>&1; uname -m) | sha256sum | cut -c1-12)"
    for other in "$dir"/*/; do
        [ -d "$other" ] && [ "$(basename "$other")" != "$key" ] && rm -rf "$other"
    done
    mkdir -p "$dir/$key"
    SWIFT_ENVIRONMENTS_SCRATCH="$dir/$key"
    echo "== build cache: scratch paths in $SWIFT_ENVIRONMENTS_SCRATCH (toolchain: $(swift --version 2>&1 | head -1))" >&2
}

# The package traits of one build, as swift build's flags (one place for every script):
#   debug: every trait (the fleet, the swift-configuration provider, Vapor: all their tests);
#   tsan: Fleet (the fleet's client, watches and status under ThreadSanitizer;
#     scripts/sanitizers.sh says why not the others); asan, release, walk, consumers: none (the
#     release graph, the Benchmarks package, names the traits it needs on its own .package line).
build_traits() { # FLAVOR
    case "$1" in
    debug) echo "--enable-all-traits" ;;
    tsan) echo "--traits Fleet" ;;
    *) echo "" ;;
    esac
}
