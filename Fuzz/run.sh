#!/bin/bash
# Builds the libFuzzer targets and runs each for SECONDS (default 60). Exits non-zero if any of
# them finds something: a crash, a broken property (the fuzzers fatalError), a hang (-timeout),
# a leak, or too much memory (-rss_limit_mb, -malloc_limit_mb; see limits() below).
#
#   Fuzz/run.sh [SECONDS [TARGET...]]     TARGET: varlink plist bplist interpolation duration logline keys mountinfo (default: all)
#   FUZZ_SEED=N   fixes libFuzzer's random seed (CI: a run that can be repeated)
#   FUZZ_JOBS=N   runs N targets at once (default 1; each uses one core)
#
# Targets (each is Fuzz/<target>/*.swift; its first comment says what it checks):
#   varlink        the control socket's framer and decoder (Sources/Varlink)
#   plist          the fast XML property-list parser, differential against Foundation; the writer, against Foundation's and read back
#   bplist         the bounds on a binary property list (values by reference, nesting), and the parser after them, against Foundation
#   interpolation  ${...} interpolation, against a reference model
#   duration       the duration parser (500ms, 1h 30min), against exact arithmetic
#   logline        the <N> stderr log line and control-character escaping: one record, no forged <N>
#   keys           key paths (SettingPath, a section's keys, APP_ variables): bounded, round-tripping, deterministic
#   mountinfo      the /proc/self/mountinfo parser the file watcher reads on mount changes: round-tripping, no trap
#
# How: each target is one executable that swiftc builds with -sanitize=fuzzer,address from the
# fuzzer's files and the library sources it tests, compiled into one module so that internal
# types are visible. No SwiftPM build is involved (it would share .build with other work); all
# output goes to .build-fuzz/. The interpolation and logline targets need swift-log, whose
# Logging module is built here from its checkout; those two and varlink need the package's
# TextEscaping module, built here too.
#
# Dictionaries: Fuzz/<target>/<target>.dict, where present, lists tokens for libFuzzer to insert.
# Corpora: the committed seeds in Fuzz/<target>/corpus/ are copied into .build-fuzz/<target>-corpus/,
# where libFuzzer also keeps the new inputs it finds, so later runs on this machine go on from there.
# Findings: Fuzz/<target>/crashes/ (git-ignored) gets crash-*, timeout-*, leak-* or oom-* files;
# replay one with `.build-fuzz/<target>-fuzzer FILE`. Once fixed, add the input to the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if [ $# -gt 0 ]; then shift; fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(varlink plist bplist interpolation duration logline keys mountinfo); fi
out=.build-fuzz
mkdir -p "$out"

# Swift's runtime backtracer would attach to a crashing fuzzer and can hang under ASan;
# libFuzzer and ASan report crashes themselves.
export SWIFT_BACKTRACE=enable=no

# -use-ld=lld: gold prints a warning for every ASan helper symbol.
swiftc_fuzzer=(swiftc -O -swift-version 6 -sanitize=fuzzer,address -use-ld=lld -parse-as-library)

# build_logging, build_text_escaping, build_locking and the rest: the modules some targets link, built
# with plain swiftc into $out (scripts/lib/modules.sh).
source scripts/lib/modules.sh
swiftc_fuzzer+=("${package_features[@]}")

# Builds $out/TARGET-fuzzer as module MODULE from all of Environments' sources (compiled in,
# so that the fuzzer reaches its internals) and Fuzz/TARGET: build_with_environments MODULE TARGET.
build_with_environments() {
    build_logging
    build_text_escaping "$1"
    build_json_text "$1"
    build_locking "$1"
    build_file_descriptor_writing "$1"
    "${swiftc_fuzzer[@]}" -module-name "$1" -package-name "$1" \
        -I "$out/logging" -L "$out/logging" -lLogging \
        -I "$out/jsontext-$1" -L "$out/jsontext-$1" -lJSONText \
        -I "$out/textescaping-$1" -L "$out/textescaping-$1" -lTextEscaping \
        -I "$out/locking-$1" -L "$out/locking-$1" -lLocking \
        -I "$out/filedescriptorwriting-$1" -L "$out/filedescriptorwriting-$1" -lFileDescriptorWriting \
        $(find Sources/Environments -name '*.swift' | sort) Fuzz/"$2"/*.swift -o "$out/$2-fuzzer"
}

# Builds $out/<target>-fuzzer.
build() {
    case "$1" in
    varlink)
        # All of Varlink's sources, and the modules they use: TextEscaping and JSONText.
        build_text_escaping VarlinkFuzz
        build_json_text VarlinkFuzz
        "${swiftc_fuzzer[@]}" -module-name VarlinkFuzz -package-name VarlinkFuzz \
            -I "$out/jsontext-VarlinkFuzz" -L "$out/jsontext-VarlinkFuzz" -lJSONText \
            -I "$out/textescaping-VarlinkFuzz" -L "$out/textescaping-VarlinkFuzz" -lTextEscaping \
            Sources/Varlink/*.swift Fuzz/varlink/*.swift -o "$out/varlink-fuzzer"
        ;;
    bplist)
        # The walk that bounds a binary property list, and the parser that decodes what it
        # lets through (with SettingValue, the duplicate-key list and the rule for which keys are
        # the same), differential against Foundation.
        "${swiftc_fuzzer[@]}" -module-name BinaryPlistFuzz -package-name BinaryPlistFuzz \
            Sources/Environments/Loading/BinaryPropertyListBounds.swift \
            Sources/Environments/Loading/BinaryPropertyListParser.swift Sources/Environments/Values/SettingValue.swift \
            Sources/Environments/Loading/DuplicateKeys.swift Sources/Environments/Keys/KeyIdentity.swift \
            Fuzz/bplist/*.swift Fuzz/shared/*.swift -o "$out/bplist-fuzzer"
        ;;
    plist)
        # The parser needs only SettingValue, the duplicate-key list and the rule for which keys
        # are the same; the writer, nothing more.
        "${swiftc_fuzzer[@]}" -module-name PlistFuzz -package-name PlistFuzz \
            Sources/Environments/Loading/XMLPropertyListParser.swift Sources/Environments/Values/SettingValue.swift \
            Sources/Environments/Loading/XMLPropertyListWriter.swift \
            Sources/Environments/Loading/DuplicateKeys.swift Sources/Environments/Keys/KeyIdentity.swift \
            Fuzz/plist/*.swift Fuzz/shared/*.swift -o "$out/plist-fuzzer"
        ;;
    interpolation)
        # The interpolator uses the options, errors and trees: all of Environments, and Logging.
        build_with_environments InterpolationFuzz interpolation
        ;;
    keys)
        # Paths, sections and variables: all of Environments, and Logging.
        build_with_environments KeyFuzz keys
        ;;
    duration)
        "${swiftc_fuzzer[@]}" -module-name DurationFuzz -package-name DurationFuzz \
            Sources/Environments/Reading/DurationParser.swift Sources/Environments/Support/String+Editing.swift \
            Fuzz/duration/*.swift -o "$out/duration-fuzzer"
        ;;
    mountinfo)
        # The mount table parser alone.
        "${swiftc_fuzzer[@]}" -module-name MountInfoFuzz -package-name MountInfoFuzz \
            Sources/FileWatching/MountTable.swift Fuzz/mountinfo/*.swift -o "$out/mountinfo-fuzzer"
        ;;
    logline)
        # The formatter, the priorities, and the escaping it uses.
        build_logging
        build_text_escaping LogLineFuzz
        "${swiftc_fuzzer[@]}" -module-name LogLineFuzz -package-name LogLineFuzz \
            -I "$out/logging" -L "$out/logging" -lLogging \
            -I "$out/textescaping-LogLineFuzz" -L "$out/textescaping-LogLineFuzz" -lTextEscaping \
            Sources/SystemdSupport/LogLineFormatter.swift Sources/SystemdSupport/SyslogPriority.swift \
            Fuzz/logline/*.swift -o "$out/logline-fuzzer"
        ;;
    *)
        echo "unknown target '$1' (targets: varlink plist bplist interpolation duration logline keys mountinfo)" >&2
        exit 2
        ;;
    esac
}

# libFuzzer options of one target, besides the common ones below.
options() {
    case "$1" in
    varlink) echo "-max_len=8192" ;;
    plist) echo "-max_len=8192 -dict=Fuzz/plist/plist.dict" ;;
    bplist) echo "-max_len=8192" ;;
    interpolation) echo "-max_len=4096 -dict=Fuzz/interpolation/interpolation.dict" ;;
    duration) echo "-max_len=256 -dict=Fuzz/duration/duration.dict" ;;
    logline) echo "-max_len=40960 -dict=Fuzz/logline/logline.dict" ;;
    keys) echo "-max_len=16384 -dict=Fuzz/keys/keys.dict" ;;
    mountinfo) echo "-max_len=8192 -dict=Fuzz/mountinfo/mountinfo.dict" ;;
    esac
}

# The memory and time limits of one target: -rss_limit_mb (the process), -malloc_limit_mb (any
# one allocation) and -timeout (seconds for one input). Interpolation's are tight: the fuzzer
# caps it at 64 KiB per value and 1 MiB in all (the model builds as much again), so an input
# that grows past that (an expansion without a bound, as 30 lines of `A2=${A1}${A1}` were) is
# an oom-* finding (a string of more than 32 MiB) within seconds rather than after gigabytes.
# The process itself settles at about 650 MB under ASan (its quarantine and the corpus).
limits() {
    case "$1" in
    interpolation) echo "-rss_limit_mb=1536 -malloc_limit_mb=32 -timeout=5" ;;
    *) echo "-rss_limit_mb=2048 -timeout=10" ;;
    esac
}

# $FUZZ_JOBS targets build and run at once (default 1; each uses one core). Logging, which
# three targets link, is built once first.
jobs="${FUZZ_JOBS:-1}"
case " ${targets[*]} " in *" varlink "* | *" interpolation "* | *" logline "* | *" keys "*) build_logging ;; esac
builds=()
for target in "${targets[@]}"; do
    echo "== building $target"
    build "$target" &
    builds+=($!)
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
for pid in "${builds[@]}"; do wait "$pid"; done # fails the run if any build failed

# $FUZZ_SEED fixes libFuzzer's random seed (CI sets it, so that a run can be repeated); unset,
# every run explores differently.
seed_option=""
if [ -n "${FUZZ_SEED:-}" ]; then seed_option="-seed=$FUZZ_SEED"; fi

# Fuzzes one target; its report goes to $out/<target>.result, its status to $out/<target>.status.
fuzz() {
    local target="$1" log="$out/$1.log" status=0
    mkdir -p "Fuzz/$target/crashes" "$out/$target-corpus"
    cp Fuzz/$target/corpus/* "$out/$target-corpus/"
    # A known leak in swift-foundation (see the file) must not stop the interpolation fuzzer.
    local lsan_options=""
    if [ -f "Fuzz/$target/lsan.supp" ]; then lsan_options="suppressions=$PWD/Fuzz/$target/lsan.supp"; fi
    # shellcheck disable=SC2046 # limits() and options() are meant to split into words
    LSAN_OPTIONS="$lsan_options" "$out/$target-fuzzer" -max_total_time="$seconds" $(limits "$target") $seed_option \
        $(options "$target") -artifact_prefix="Fuzz/$target/crashes/" \
        "$out/$target-corpus" >"$log" 2>&1 || status=$?
    if [ "$status" -eq 0 ]; then
        # libFuzzer's last line: "Done 123456 runs in 61 second(s)".
        echo "$target: $(grep -a '^Done ' "$log" | tail -1)"
    else
        echo "$target: FAILED (full log: $log); the end of its output:"
        grep -av '^#[0-9]' "$log" | tail -40
    fi
    echo "$status" >"$out/$target.status"
}

echo "== fuzzing ${targets[*]} for $seconds s each, $jobs at a time"
for target in "${targets[@]}"; do
    rm -f "$out/$target.status"
    fuzz "$target" >"$out/$target.result" 2>&1 &
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
wait
failed=()
for target in "${targets[@]}"; do
    cat "$out/$target.result"
    [ "$(cat "$out/$target.status" 2>/dev/null || echo 1)" = 0 ] || failed+=("$target")
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "== failed: ${failed[*]} (inputs in Fuzz/<target>/crashes/)"
    exit 1
fi
echo "== all passed: ${targets[*]}"
