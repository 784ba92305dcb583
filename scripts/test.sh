#!/bin/bash
# Runs every test: installs the Debian packages the build and the tests need (when missing),
# builds, runs the Swift Testing suites, compares the plist corpus with Python's plistlib
# (scripts/plist-corpus-compare.py), type-checks the snippets of the README and the DocC
# articles (scripts/check-snippets.py), then the end-to-end tests under a real systemd
# (systemd 252 and 257 in containers; see Tests/EndToEnd/README.md), and the Debian package
# (scripts/package-deb.sh and lintian), installed, reloaded and purged with apt under 257 and 252.
#
# Work that waits overlaps work that computes, on two cores: the containers' root file systems
# are made while Swift compiles, and the release build compiles beside the debug build and the
# unit tests. The output of a build that runs beside something else goes to a log, printed if
# the build fails. A table of each step's wall time ends the run.
set -euo pipefail
cd "$(dirname "$0")/.."
standalone=$([ -z "${STEPS_FILE:-}" ] && echo 1 || echo 0)
source scripts/lib/steps.sh
source scripts/lib/scratch.sh
debug_scratch="$(scratch_path debug)"
logs="$(mktemp -d)"
background=()
finish() {
    local status=$?
    for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done # still running: stop it
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

# The containers' root file systems (cached outside the clone; built only on a machine that
# has none) are made while Swift compiles.
step "end-to-end: root file systems (beside the build)" \
    logged "$logs/rootfs.log" python3 Tests/EndToEnd/run_e2e.py --prepare &
rootfs=$!
background+=("$rootfs")

# The release build (scripts/build-release.sh: the containers' binaries and the benchmarks, in
# one graph) compiles beside the debug build and the unit tests.
step "release build (scripts/build-release.sh, in the background)" \
    logged "$logs/release-build.log" scripts/build-release.sh &
release=$!
background+=("$release")

step "swift build --build-tests" swift build --build-tests --scratch-path "$debug_scratch"
step "swift test" swift test --skip-build --scratch-path "$debug_scratch"
# Real property lists from public repositories (Tests/PlistCorpus), read by our loader and by
# Python's plistlib, compared value by value; differences must be listed exceptions.
step "plist corpus against plistlib" python3 scripts/plist-corpus-compare.py --scratch-path "$debug_scratch"
# Every Swift snippet of the README and the DocC articles, type-checked against that build.
step "snippets of the README and the articles" python3 scripts/check-snippets.py --scratch-path "$debug_scratch"
wait_for "$release" "$logs/release-build.log"
binaries="$(scripts/build-release.sh --show-bin-path)"
# The template daemon (Examples/minimal-daemon), built in the same release graph: started,
# reloaded with SIGHUP and envctl, stopped with SIGTERM (exit status 0).
step "template daemon (Examples/minimal-daemon/smoke-test.sh)" \
    Examples/minimal-daemon/smoke-test.sh "$binaries/minimal-daemon" "$binaries/envctl"

wait_for "$rootfs" "$logs/rootfs.log"
step "end-to-end tests under systemd" python3 Tests/EndToEnd/run_e2e.py --binaries "$binaries"
step "end-to-end: Hummingbird example (257)" python3 Tests/EndToEnd/run_hummingbird_e2e.py \
    --binary "$binaries/hummingbird-service" --envctl "$binaries/envctl"
# The Debian package of the same binaries (lintian must report no error), installed with
# `apt-get install ./FILE.deb`, reloaded, reinstalled and purged in systemd 257 and 252 containers.
step "Debian package (scripts/package-deb.sh, lintian)" \
    scripts/package-deb.sh --bin-dir "$binaries" --output-dir "$logs/deb"
step "end-to-end: Debian package (257, 252)" python3 Tests/EndToEnd/run_deb_e2e.py --deb "$logs"/deb/example-daemon_*.deb
rm -rf "$logs"
