# Timing for scripts/test.sh and .ci/run: sourced, not run.
#
#   step NAME COMMAND...   runs COMMAND, then records when it started (seconds since
#                          $STEPS_ORIGIN), how long it took and its exit status in $STEPS_FILE
#   print_steps TITLE      prints the recorded steps as a table, in order of start
#
# Steps that run at the same time (.ci/run's two lanes) record into the same file, each line
# written with one append, so the table shows what overlapped.

: "${STEPS_ORIGIN:=$(date +%s)}"
: "${STEPS_FILE:=$(mktemp)}"
export STEPS_ORIGIN STEPS_FILE

step() {
    local name="$1"
    shift
    local started status=0
    started=$(date +%s)
    echo "== $name"
    "$@" || status=$?
    local ended
    ended=$(date +%s)
    printf '%6d %6d %4d  %s\n' $((started - STEPS_ORIGIN)) $((ended - started)) "$status" "$name" >>"$STEPS_FILE"
    return "$status"
}

print_steps() {
    echo
    echo "== $1 (wall time; steps that start before the one above ends ran at the same time)"
    printf '%6s %6s %4s  %s\n' "start" "took" "exit" "step"
    sort -n "$STEPS_FILE"
    printf '%6s %6d %4s  %s\n' "" $(($(date +%s) - STEPS_ORIGIN)) "" "total"
}
