#!/bin/bash
# Runs every test: installs the Debian packages the build and the tests need (when missing),
# builds, runs the Swift Testing suites, compares the plist corpus with Python's plistlib
# (scripts/plist-corpus-compare.py), type-checks the snippets of the README and the DocC
# articles (scripts/check-snippets.py), then the end-to-end tests under a real systemd
# (systemd 252 and 257 in containers; see Tests/EndToEnd/README.md), and the Debian package
# (scripts/package-deb.sh and lintian), installed, reloaded and purged with apt under 257 and 252.
# The Vapor integration is a package of its own (Integrations/EnvironmentsVapor, so that no user
# of swift-environments builds Vapor): its build and tests follow the package's.
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
vapor_scratch="$(scratch_path vapor)"
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

step "swift build --build-tests" swift build --build-tests --scratch-path "$debug_scratch"
# The Vapor integration's build compiles beside the Swift tests, which mostly wait (on daemons,
# etcd, sockets); then its own tests (a real Vapor application on real files and its control
# socket). Its build also holds the modules that the Vapor article's snippets compile against.
step "Vapor integration: swift build --build-tests" logged "$logs/vapor-build.log" nice -n 10 swift build --build-tests \
    --package-path Integrations/EnvironmentsVapor --scratch-path "$vapor_scratch" &
vapor_build=$!
background+=("$vapor_build")
step "swift test" swift test --skip-build --scratch-path "$debug_scratch"
wait_for "$vapor_build" "$logs/vapor-build.log"
step "Vapor integration: swift test" swift test --skip-build \
    --package-path Integrations/EnvironmentsVapor --scratch-path "$vapor_scratch"
# Real property lists from public repositories (Tests/PlistCorpus), read by our loader and by
# Python's plistlib, compared value by value; differences must be listed exceptions.
step "plist corpus against plistlib" python3 scripts/plist-corpus-compare.py --scratch-path "$debug_scratch"
# Every Swift snippet of the README and the DocC articles, type-checked against that build.
step "snippets of the README and the articles" python3 scripts/check-snippets.py --scratch-path "$debug_scratch" \
    --vapor-scratch-path "$vapor_scratch"
wait_for "$chain" "$logs/systemd.log"
cat "$logs/systemd.log"
rm -rf "$logs"
