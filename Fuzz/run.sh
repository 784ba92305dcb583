#!/bin/bash
# Builds and runs the libFuzzer targets, each for the given number of seconds (default 60).
#   Fuzz/run.sh [SECONDS]
# Needs only the Swift toolchain (libFuzzer ships with it). Crashes land in Fuzz/<target>/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build-fuzz
mkdir -p "$out"

# varlink: the control socket's framer and decoder (EnvironmentsControl has no dependencies,
# so its sources compile straight into the fuzzer).
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name VarlinkFuzz -package-name VarlinkFuzz \
    Sources/EnvironmentsControl/*.swift Fuzz/varlink/VarlinkFuzzer.swift -o "$out/varlink-fuzzer"
mkdir -p Fuzz/varlink/crashes "$out/varlink-corpus"
cp Fuzz/varlink/corpus/* "$out/varlink-corpus/"
"$out/varlink-fuzzer" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
    -artifact_prefix=Fuzz/varlink/crashes/ "$out/varlink-corpus" 2>&1 | tail -5
