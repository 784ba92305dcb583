#!/bin/bash
# Runs every test: installs the Debian packages the build and the tests need (when missing),
# builds, runs the Swift Testing suites, compares the plist corpus with Python's plistlib
# (scripts/plist-corpus-compare.py), type-checks the snippets of the README and the DocC
# articles (scripts/check-snippets.py), then the end-to-end tests under a real systemd
# (systemd 252 and 257 in containers; see Tests/EndToEnd/README.md), "Getting started" walked
# command by command (scripts/walk-getting-started.py), and the Debian package
# (scripts/package-deb.sh and lintian), installed, reloaded and purged with apt under 257 and 252.
# The debug build has every package trait (scripts/lib/scratch.sh's build_traits): the fleet
# (EnvironmentsEtcd, envctl-fleet, example-fleet-daemon: its suites start real etcd clusters,
# etcd-server from scripts/install-packages.sh, and run envctl and the example daemons of the
# same build as processes; envctl runs envctl-fleet from beside it), the swift-configuration
# provider and the Vapor integration (a real Vapor application on real files and its control
# socket) are built and tested in one graph with the rest.
#
# Work that waits overlaps work that computes, on two cores: the release build, then the
# containers, run beside the debug build and the unit tests. The output of what runs beside
# something else goes to a log, printed when it ends (a build's only if it fails). A table of
# each step's wall time ends the run.
set -euo pipefail
cd "$(dirname "$0")/.."
standalone=$([ -z "${STEPS_FILE:-}" ] && echo 1 || echo 0)
source scripts/lib/steps.sh
source scripts/lib/scratch.sh
debug_scratch="$(scratch_path debug)"
read -r -a debug_traits <<<"$(build_traits debug)"
logs="$(mktemp -d)"
background=()
# Stops a process and everything it started.
kill_tree() { # pid
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
finish() {
    local status=$?
    for pid in "${background[@]}"; do kill_tree "$pid"; done # still running: stop it
    [ "$standalone" = 1 ] && print_steps "scripts/test.sh steps"
    exit "$status"
}
trap finish EXIT

# Waits for a step started in the background; prints its log if it failed.
wait_for() { # pid log
    local status=0
    wait "$1" || status=$?
    local remaining=() pid
    for pid in "${background[@]}"; do [ "$pid" = "$1" ] || remaining+=("$pid"); done
    background=("${remaining[@]}")
    if [ "$status" -ne 0 ]; then
        tail -80 "$2" >&2
        echo "scripts/test.sh: a background step failed (exit $status); its whole log: $2" >&2
        exit "$status"
    fi
}

# Runs a command with its output in a log: for steps that run beside another.
logged() { # log command...
    "${@:2}" >"$1" 2>&1
}

scripts/install-packages.sh

# What runs on the release build, in a chain beside the debug build and the Swift tests: the
# chain makes the containers' root file systems (cached outside the clone; built only on a
# machine that has none) while the release build (scripts/build-release.sh: the containers'
# binaries and the benchmarks, in one graph) compiles, then runs the end-to-end tests under
# systemd (252 and 257), the Hummingbird and Vapor examples under 257, and the Debian package of the same
# binaries (lintian must report no error), installed with `apt-get install ./FILE.deb`,
# reloaded, reinstalled and purged in 257 and 252 containers. The containers wait on systemd
# far more than they compute (the end-to-end tests: 18 s of processor in 130 s).
systemd_chain() {
    step "end-to-end: root file systems" logged "$logs/rootfs.log" python3 Tests/EndToEnd/run_e2e.py --prepare &
    local rootfs=$!
    # The release graph and the Vapor build compile beside the Swift tests at a lower priority
    # (nice 10): the tests' in-process daemons answer within seconds only if they get the
    # processor when they ask for it; the compilers use whatever the tests leave.
    step "release build (scripts/build-release.sh)" logged "$logs/release-build.log" nice -n 10 scripts/build-release.sh || {
        tail -80 "$logs/release-build.log"
        return 1
    }
    local binaries status=0
    binaries="$(scripts/build-release.sh --show-bin-path)"
    wait "$rootfs" || status=$?
    if [ "$status" -ne 0 ]; then
        tail -80 "$logs/rootfs.log"
        return "$status"
    fi
    # The template daemon (Examples/minimal-daemon), built in the same release graph: started,
    # reloaded with SIGHUP and envctl, stopped with SIGTERM (exit status 0).
    step "template daemon (Examples/minimal-daemon/smoke-test.sh)" \
        Examples/minimal-daemon/smoke-test.sh "$binaries/minimal-daemon" "$binaries/envctl"
    # "Getting started", walked: its commands from "Your own daemon" on, in order, as written
    # (a clone of this clone, the template copied and renamed, swift run, the release builds of
    # greeter and envctl, then systemd 252 in a container), each promised outcome checked. Its
    # builds stay warm in a fixed directory (scratch_path walk), at nice 10 like the release build.
    step "walk of Getting started (scripts/walk-getting-started.py)" nice -n 10 scripts/walk-getting-started.py
    step "end-to-end tests under systemd" python3 Tests/EndToEnd/run_e2e.py --binaries "$binaries"
    step "end-to-end: Hummingbird example (257)" python3 Tests/EndToEnd/run_hummingbird_e2e.py \
        --binary "$binaries/hummingbird-service" --envctl "$binaries/envctl"
    step "end-to-end: Vapor example (257)" python3 Tests/EndToEnd/run_vapor_e2e.py \
        --binary "$binaries/vapor-service" --envctl "$binaries/envctl"
    # Its man pages come from the debug build (scripts/install-docs.sh): SwiftPM runs that after
    # the Swift tests, which hold the debug build.
    step "Debian package (scripts/package-deb.sh, lintian)" \
        scripts/package-deb.sh --bin-dir "$binaries" --output-dir "$logs/deb"
    step "end-to-end: Debian package (257, 252)" python3 Tests/EndToEnd/run_deb_e2e.py --deb "$logs"/deb/example-daemon_*.deb
}
systemd_chain >"$logs/systemd.log" 2>&1 &
chain=$!
background+=("$chain")

step "swift build --build-tests ${debug_traits[*]}" swift build --build-tests "${debug_traits[@]}" \
    --scratch-path "$debug_scratch"
# Every suite but the fleet's, then the fleet's on real etcd clusters (minutes of waiting on etcd:
# elections, leases, timeouts), each run on its own as when the fleet was a package of its own.
step "swift test" swift test --skip-build "${debug_traits[@]}" --scratch-path "$debug_scratch" \
    --skip EnvironmentsEtcdTests
step "swift test (the fleet, on etcd)" swift test --skip-build "${debug_traits[@]}" --scratch-path "$debug_scratch" \
    --filter EnvironmentsEtcdTests
# Real property lists from public repositories (Tests/PlistCorpus), read by our loader and by
# Python's plistlib, compared value by value; differences must be listed exceptions.
step "plist corpus against plistlib" python3 scripts/plist-corpus-compare.py --scratch-path "$debug_scratch"
# Every Swift snippet of the README and the DocC articles, type-checked against that build.
step "snippets of the README and the articles" python3 scripts/check-snippets.py --scratch-path "$debug_scratch"
wait_for "$chain" "$logs/systemd.log"
cat "$logs/systemd.log"
rm -rf "$logs"
