#!/bin/bash
# Runs the minimal daemon briefly, as CI does (scripts/test.sh), outside systemd: starts it on a
# copy of config/, edits the file and sends SIGHUP (the new greeting must be logged), reloads a
# file it must reject with `envctl reload` (non-zero, and the daemon keeps its greeting), then
# sends SIGTERM (it must exit 0).
#
#   Examples/minimal-daemon/smoke-test.sh BINARY [ENVCTL]
set -euo pipefail
binary="$(realpath "$1")"
envctl="${2:+$(realpath "$2")}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
pid=
cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "minimal-daemon smoke test: $*" >&2
    echo "--- its log:" >&2
    cat "$work/log" >&2
    exit 1
}
# Waits up to 10 s until the log has a line matching $1 (ignoring case) after line $2 (0).
wait_for() {
    for _ in $(seq 100); do
        tail -n "+$((${2:-0} + 1))" "$work/log" | grep -qi -- "$1" && return 0
        kill -0 "$pid" 2>/dev/null || fail "exited while waiting for '$1'"
        sleep 0.1
    done
    fail "no '$1' in its log after 10 s"
}

mkdir -p "$work/config" "$work/run"
cp "$here/config/Environments.plist" "$work/config/"
# Not under systemd: no journal stream or notify socket; the control socket in $work/run.
env -u NOTIFY_SOCKET -u JOURNAL_STREAM -u WATCHDOG_USEC RUNTIME_DIRECTORY="$work/run" \
    "$binary" --config-dir "$work/config" --environment Release >"$work/log" 2>&1 &
pid=$!
wait_for "Hello from minimal-daemon"

# The file watcher may apply the edit before the signal does: either way the new greeting is
# logged, and the signal is handled (a reload that applies it or finds nothing left to do).
before=$(wc -l <"$work/log")
sed -i 's|Hello from minimal-daemon|Hello again|' "$work/config/Environments.plist"
kill -HUP "$pid"
wait_for "Hello again" "$before"
wait_for "signal" "$before"

if [ -n "$envctl" ]; then
    # Out of GreetingInterval's bounds: the reload is rejected and the greeting stays.
    sed -i 's|<string>1min</string>|<string>1ms</string>|' "$work/config/Environments.plist"
    if "$envctl" reload --socket "$work/run/configuration.varlink" >"$work/envctl.out" 2>&1; then
        cat "$work/envctl.out" >&2
        fail "envctl reload accepted GreetingInterval=1ms"
    fi
    grep -q GreetingInterval "$work/envctl.out" || { cat "$work/envctl.out" >&2; fail "envctl reload's error does not name GreetingInterval"; }
fi

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "exit status $status after SIGTERM, not 0"
grep -q "stopped" "$work/log" || fail "no 'stopped' in its log"
echo "minimal-daemon smoke test: started, reloaded on SIGHUP${envctl:+, rejected a bad file through envctl}, stopped with status 0"
