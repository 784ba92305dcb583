#!/bin/bash
# Instructions per lookup, counted by valgrind's callgrind: the figure that repeats on a
# shared machine where timings do not. Each is compared with a `[String: String]` lookup
# (dictionary) and a `[String: Any]` lookup (dictionary-any, the peer of `fetch`, which also
# returns `Any`). Each kind runs at two lookup counts; the difference
# divided by the extra lookups leaves out start-up, file loading and set-up.
#
#     Benchmarks/count-instructions.sh [LOOKUPS [THREADS]]      (defaults: 200000, 1)
#
# With THREADS, that many threads each make LOOKUPS lookups at once (valgrind runs them one
# at a time, so the count is exact); the figure is per lookup.
#
# Needs valgrind, objcopy and objdump (apt-get install valgrind binutils). It also checks that
# Environment.shared is initialized statically (see below), and fails if it is not.
set -euo pipefail
cd "$(dirname "$0")"
lookups="${1:-200000}"
threads="${2:-1}"
command -v valgrind >/dev/null || { echo "count-instructions.sh: install valgrind first" >&2; exit 1; }
# $LOOKUP_PROFILE counts another build of lookup-profile (an older commit's, side by side).
source_binary="${LOOKUP_PROFILE:-}"
if [ -z "$source_binary" ]; then
    swift build -c release --product lookup-profile >&2
    source_binary="$(swift build -c release --show-bin-path)/lookup-profile"
fi
# valgrind 3.19 gives up on the DWARF of Swift 6 release builds ("Possibly corrupted debuginfo
# file"): count a copy without debug information.
binary="$(mktemp -d)/lookup-profile"
trap 'rm -rf "$(dirname "$binary")"' EXIT
objcopy --strip-debug "$source_binary" "$binary"

# Environment.shared must be an object that Swift initializes statically: its reference count
# is then never written, and the retain and release that every call site makes around
# `Environment.shared.fetch(...)` write nothing that reading threads share (on an ordinary object
# two threads reading at once slow each other down by 1.5 times; Environments' EnvironmentParts
# says why). It is, as long as Environment's stored properties hold constants for `shared`.
shared_initializer='$s12Environments11EnvironmentC6shared_WZ'
if ! objdump -d --no-show-raw-insn --disassemble="$shared_initializer" "$binary" | grep -q swift_initStaticObject; then
    echo "count-instructions.sh: Environment.shared is no longer initialized statically (its initializer" \
        "$shared_initializer does not call swift_initStaticObject): keep an Environment's state in" \
        "EnvironmentParts, not in stored properties of Environment" >&2
    exit 1
fi

count() { # kind lookups -> instructions
    local output
    output="$(SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$1" "$2" "$threads" 2>&1 >/dev/null)" || {
        echo "$output" >&2
        echo "count-instructions.sh: valgrind failed on $1" >&2
        exit 1
    }
    echo "$output" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

echo "instructions per lookup, $threads thread(s)"
printf '%-22s %14s %10s %14s\n' "lookup" "instr/lookup" "vs dict" "vs dict-any"
dictionary="" dictionary_any=""
for kind in dictionary dictionary-any fetch held-fetch own-fetch declared-fetch string declared ours-provider swift-configuration; do
    low="$(count "$kind" "$lookups")"
    high="$(count "$kind" $((lookups * 2)))"
    per="$(awk -v a="$low" -v b="$high" -v n="$((lookups * threads))" 'BEGIN { printf "%.1f", (b - a) / n }')"
    [ -z "$dictionary" ] && dictionary="$per"
    [ "$kind" = dictionary-any ] && dictionary_any="$per"
    ratio="$(awk -v a="$per" -v d="$dictionary" 'BEGIN { printf "%.2fx", a / d }')"
    ratio_any="$(awk -v a="$per" -v d="${dictionary_any:-0}" 'BEGIN { if (d > 0) printf "%.2fx", a / d; else printf "-" }')"
    printf '%-22s %14s %10s %14s\n' "$kind" "$per" "$ratio" "$ratio_any"
done
