#!/bin/bash
# Runs the Swift tests under ThreadSanitizer and under AddressSanitizer (LeakSanitizer
# included), each in a build folder of its own, and fails on any report.
#   scripts/sanitizers.sh [--build-only] [--all] [thread|address]...     (default: both)
# Suppressions for what the toolchain's libraries and the packages we depend on do (leaks in
# .ci/lsan.supp, races ThreadSanitizer cannot see ordered in .ci/tsan.supp) each give their
# reason; leaks and races of ours are fixed, never suppressed.
#
# Which tests: those where a sanitizer can find something, which is most of them. Left out
# (--all runs them too), because there the instrumented build costs minutes and finds nothing
# that the tests kept do not reach:
#   - suites that drive our executables from outside (example-daemon, envctl with the stand-in
#     envctl-fleet it runs, the Info.plist tool as processes) and read their output: the test process only waits. Their code is
#     instrumented too, and its reports are caught (log_path below), so one suite that runs
#     the daemon as a process stays (ExampleDaemonTests: start, SIGHUP, control socket, stop),
#     beside every suite that runs EnvironmentService, the control socket, the reloader, the
#     file watchers and the journal in the test process itself;
#   - tests of size limits on one thread (100,000 keys, 100,000-deep interpolation chains,
#     Foundation's large binary files): linear work, no concurrency, and the same code runs
#     small in the tests kept; the fuzzers run the parsers and interpolation under
#     AddressSanitizer (Fuzz/run.sh).
#
# The package's traits (scripts/lib/scratch.sh's build_traits):
#   - ThreadSanitizer builds with the trait Fleet, so the fleet's client and its watches
#     (FleetLayoutTests), its failover, stalls and restarts (FleetLiveTests: a minute of waiting
#     on etcd's timeouts), fleet status (FleetStatusTests), the client's lifetime and the fleet's
#     key layout run instrumented, in the same build and test run as the rest. Left out there:
#     the suites of TLS, users, `envctl publish` and staged publishes (processes, which wait on
#     etcd).
#   - AddressSanitizer builds with no trait: the fleet there would be one more instrumented
#     build of swift-nio, BoringSSL and AsyncHTTPClient (8 minutes or more on two cores with the
#     build cache empty) for a client in Swift without unsafe memory, whose concurrency
#     ThreadSanitizer covers; BoringSSL and NIO run their own sanitizer CI.
#   - Neither builds the trait SwiftConfiguration: about 340 lines of adapter (its SnapshotFeed
#     over `Locked` and an Environment observer, which the core's suites run under both
#     sanitizers), for which an instrumented build would compile swift-configuration twice more.
#   - Nor the trait Vapor (a build of Vapor and SwiftNIO for each sanitizer).
# scripts/test.sh runs every test with every trait, without a sanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh
build_only=0 all=0
while [ $# -gt 0 ]; do
    case "$1" in
    --build-only) build_only=1 && shift ;;
    --all) all=1 && shift ;;
    *) break ;;
    esac
done
sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(thread address)

# Swift Testing identifiers (Module.Type/function) that --skip leaves out; see above.
processes="EnvironmentsDaemonTests\.(BrokenDeployDaemonTests|DeterminismDaemonTests|DuplicateKeyDaemonTests|HostileInterpolationTests|InotifyLimitTests|KeyPathDaemonTests|PathsAndNamesTests|SecretLeakTests|TerminalOutputTests|VariableOverrideDaemonTests)/|EnvctlTests\.(EnvctlConcurrencyTests|EnvctlConventionsTests|EnvctlEditingTests|EnvctlEffectTests|EnvctlFleetToolTests|EnvctlKeyIdentityTests|EnvctlLiteralKeyTests|EnvctlMigrateTests|EnvctlOperatorTests|EnvctlPeerTrustTests|EnvctlSchemaTests|EnvctlUnderChangeTests|EnvctlXMLCharacterTests|FileTransactionTests)/|EmbedInfoPlistToolTests\.EmbedInfoPlistToolTests/"
sizes="EnvironmentsDaemonTests\.LargeConfigurationTests/|EnvironmentsTests\.InterpolationLimitTests/(chainsHundredThousandDeep|cycleHundredThousandLong|chainEndingInAMissingKey|wideFanOutAndFanIn)|EnvironmentsTests\.BinaryPropertyListTests/foundationFilesLoad"
# The fleet's (ThreadSanitizer's build only has the trait Fleet).
etcd="EnvironmentsEtcdTests\.(FleetSecurityTests|PublishTests|StagedPublishTests)/"

for sanitizer in "${sanitizers[@]}"; do
    case "$sanitizer" in
    thread | address) ;;
    *)
        echo "scripts/sanitizers.sh: unknown sanitizer '$sanitizer' (thread or address)" >&2
        exit 2
        ;;
    esac
done

# Builds the package under one sanitizer, with its tests (and its executables, which the
# suites run as processes).
build() { # sanitizer scratch swift-build-options...
    local sanitizer="$1" scratch="$2"
    shift 2
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "$@"
}

# Runs one package's tests under one sanitizer; fails on any report.
run_tests() { # sanitizer scratch skip-pattern swift-test-options...
    local sanitizer="$1" scratch="$2" pattern="$3"
    shift 3
    local skip=(--skip "$pattern")
    [ "$all" = 1 ] && skip=()
    local log reports_dir reports status=0
    log="$(mktemp)"
    # Every instrumented process (the test runner, and the daemons and envctl it starts) writes
    # its reports to a file of its own here: a daemon's would otherwise go to a log the test
    # deletes.
    reports_dir="$(mktemp -d)"
    # halt_on_error=0: report every race and carry on, so that one run shows them all; the
    # sanitizer's exit status (66 for TSan, 1 for ASan) still fails the run. --no-parallel:
    # instrumented code runs several times slower, and tests that block a thread while they
    # wait for a daemon would then starve the tasks of the tests beside them on two cores.
    TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 log_path=$reports_dir/report suppressions=$PWD/.ci/tsan.supp" \
        ASAN_OPTIONS="detect_leaks=1 log_path=$reports_dir/report" \
        LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp print_suppressions=0" \
        swift test --skip-build --no-parallel --sanitize="$sanitizer" --scratch-path "$scratch" "$@" "${skip[@]}" \
        >"$log" 2>&1 || status=$?
    reports="$(cat "$log" "$reports_dir"/* 2>/dev/null |
        grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer)' || true)"
    tail -3 "$log"
    if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
        for file in "$log" "$reports_dir"/*; do
            [ -f "$file" ] || continue
            grep -E -A30 '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR)|✘' "$file" | head -200 >&2 || true
        done
        echo "scripts/sanitizers.sh: $sanitizer: exit status $status, $reports report(s); full log: $log, reports: $reports_dir" >&2
        exit 1
    fi
    rm -rf "$log" "$reports_dir"
}

for sanitizer in "${sanitizers[@]}"; do
    flavor="$([ "$sanitizer" = thread ] && echo tsan || echo asan)"
    scratch="$(scratch_path "$flavor")"
    read -r -a traits <<<"$(build_traits "$flavor")"
    echo "== swift test --sanitize=$sanitizer ${traits[*]} (--scratch-path $scratch)"
    build "$sanitizer" "$scratch" "${traits[@]}"
    [ "$build_only" = 1 ] && continue
    run_tests "$sanitizer" "$scratch" "$processes|$sizes|$etcd" "${traits[@]}"
    echo "   $sanitizer: no report"
done
