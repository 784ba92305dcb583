#!/bin/bash
# Runs the Swift tests under ThreadSanitizer and under AddressSanitizer (LeakSanitizer
# included), each in a build folder of its own, and fails on any report.
#   scripts/sanitizers.sh [--build-only] [thread|address]...     (default: both)
# LeakSanitizer's suppressions for the toolchain's own leaks are in .ci/lsan.supp, each with
# its reason; leaks of ours are fixed, never suppressed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/scratch.sh
build_only=0
if [ "${1:-}" = --build-only ]; then build_only=1 && shift; fi
sanitizers=("$@")
[ ${#sanitizers[@]} -eq 0 ] && sanitizers=(thread address)

for sanitizer in "${sanitizers[@]}"; do
    case "$sanitizer" in
    thread | address) ;;
    *)
        echo "scripts/sanitizers.sh: unknown sanitizer '$sanitizer' (thread or address)" >&2
        exit 2
        ;;
    esac
    scratch="$(scratch_path "$([ "$sanitizer" = thread ] && echo tsan || echo asan)")"
    echo "== swift test --sanitize=$sanitizer (--scratch-path $scratch)"
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    [ "$build_only" = 1 ] && continue
    log="$(mktemp)"
    status=0
    # halt_on_error=0: report every race and carry on, so that one run shows them all; the
    # sanitizer's exit status (66 for TSan, 1 for ASan) still fails the run. --no-parallel:
    # instrumented code runs several times slower, and tests that block a thread while they
    # wait for a daemon would then starve the tasks of the tests beside them on two cores.
    TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" \
        ASAN_OPTIONS="detect_leaks=1" \
        LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp print_suppressions=0" \
        swift test --skip-build --no-parallel --sanitize="$sanitizer" --scratch-path "$scratch" >"$log" 2>&1 || status=$?
    reports="$(grep -cE '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer)' "$log" || true)"
    tail -3 "$log"
    if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
        grep -E -A30 '^(WARNING: ThreadSanitizer|==[0-9]+==ERROR)|✘' "$log" | head -200 >&2 || true
        echo "scripts/sanitizers.sh: $sanitizer: exit status $status, $reports report(s); full log: $log" >&2
        exit 1
    fi
    echo "   $sanitizer: no report"
    rm -f "$log"
done
