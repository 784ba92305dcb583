#!/bin/bash
# The optimized read path under ThreadSanitizer: builds Tests/ReadPathStress with
# `swiftc -O -sanitize=thread` (the Environments module, TextEscaping, Locking and swift-log's Logging
# compiled in with the same flags, no SwiftPM) and runs it for SECONDS (default 20). Fails on any
# inconsistent read, failed reload or ThreadSanitizer report.
#
#   scripts/tsan-read-path.sh [SECONDS]
#
# Why: `swift test --sanitize=thread` builds for debugging, but what the optimizer may do to
# retains and releases around a read only happens in an optimized build.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
out=.build-tsan-read-path
module_flags=(-O -sanitize=thread)
source scripts/lib/modules.sh
mkdir -p "$out"

echo "== building the read path with -O -sanitize=thread"
build_logging
build_text_escaping ReadPathStress
build_json_text ReadPathStress
build_locking ReadPathStress
build_file_descriptor_writing ReadPathStress
build_environments ReadPathStress
# Static libraries: each before the ones it uses.
swiftc -O -sanitize=thread -swift-version 6 -module-name ReadPathStress -package-name ReadPathStress \
    -I "$out/environments-ReadPathStress" -L "$out/environments-ReadPathStress" -lEnvironments \
    -I "$out/jsontext-ReadPathStress" -L "$out/jsontext-ReadPathStress" -lJSONText \
    -I "$out/textescaping-ReadPathStress" -L "$out/textescaping-ReadPathStress" -lTextEscaping \
    -I "$out/locking-ReadPathStress" -L "$out/locking-ReadPathStress" -lLocking \
    -I "$out/filedescriptorwriting-ReadPathStress" -L "$out/filedescriptorwriting-ReadPathStress" -lFileDescriptorWriting \
    -I "$out/logging" -L "$out/logging" -lLogging \
    Tests/ReadPathStress/main.swift -o "$out/read-path-stress"

echo "== running it for $seconds s"
log="$(mktemp)"
status=0
TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" "$out/read-path-stress" "$seconds" >"$log" 2>&1 || status=$?
reports="$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)"
grep -v '^  ' "$log" | grep -v '^WARNING\|^====\|^SUMMARY' | tail -3
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
    head -150 "$log" >&2
    echo "scripts/tsan-read-path.sh: exit status $status, $reports ThreadSanitizer report(s); full log: $log" >&2
    exit 1
fi
echo "   no ThreadSanitizer report"
rm -f "$log"
