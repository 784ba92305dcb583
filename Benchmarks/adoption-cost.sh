#!/bin/bash
# What adopting the package costs a new user (issues 43 and 55), from a fresh clone of REPO at
# REF (default: the repository this script is in, at HEAD; committed state only):
#
#   1. resolve: the packages SwiftPM resolves for a new package that depends on the
#      `Environments` product alone (by path, so no tag is needed; no `traits:`, so none of the
#      package's traits, Fleet, SwiftConfiguration and Vapor, and none of their dependencies),
#      and how long `swift package resolve` takes, from an empty package cache.
#      (scripts/check-consumers.sh counts the same by URL from a tagged clone, with
#      swift-environments among the pins.)
#   2. run: the README's first command, `swift run example-daemon`, in a fresh clone with an
#      empty package cache: seconds from its start to the daemon's first log line (goal: 45),
#      and the packages SwiftPM fetched for it. The daemon is then stopped (SIGTERM to its
#      process group).
#   3. build: envctl's static release build (`swift build -c release --product envctl
#      --static-swift-stdlib`) in a fresh clone whose packages are fetched already (a warm
#      package cache; the fetch is not timed): seconds (goal: 120), the modules' compile times
#      from the compiler's own statistics (`-stats-output-dir`) and when each ran, the link,
#      the executable's size unstripped (goal: 60 MB), its ICU and Foundation symbols; then
#      example-daemon's static release build in the same build folder, its size (goal: 40 MB)
#      and symbols.
#   4. runtime: heap bytes per key at 10,000 keys (goal: 160) and the cold start (an XML plist
#      of 10,000 and 100,000 keys to the first value read: ours, the parse alone, and
#      swift-configuration's; goals: 5x faster than swift-configuration, within 2x of the
#      parse alone), from `environment-benchmarks --only memory --only cold --json`, built
#      in release from the clone's Benchmarks package (or ADOPTION_COST_BENCHMARKS=PATH, an
#      environment-benchmarks already built from the same commit).
#
#     Benchmarks/adoption-cost.sh [--only resolve|run|build|runtime]... [REPO] [REF]
#
# Parts 1 and 2 never use SwiftPM's shared cache (~/.cache/org.swift.swiftpm): every SwiftPM
# command gets `--cache-path` and `--scratch-path` pointing at new, empty directories; the flags
# only move the caches, the commands are the user's. (`--disable-dependency-cache` alone is not
# enough: SwiftPM still reads and writes the shared manifest cache, ~/.cache/.../manifests/manifest.db.)
# Part 3 does the same, with the packages fetched into those directories before the clock starts.
# The compiler's module cache (~/.cache/clang/ModuleCache) is shared; it is not a package cache.
# Goals are printed beside the figures, never enforced: the figures depend on the machine's load
# (printed with each part).
#
# Environment: ADOPTION_COST_TIMEOUT (seconds, default 1200) bounds each part;
# ADOPTION_COST_MAX_PACKAGES=N fails the resolve part when more than N packages besides
# swift-environments are resolved (.ci/run: 6, so at most 7 with swift-environments itself);
# ADOPTION_COST_KEEP=1 keeps the temporary directory.
set -euo pipefail
export LC_NUMERIC=C

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

parts=()
positional=()
while (($#)); do
    case $1 in
        --only) parts+=("${2:?--only takes resolve, run, build or runtime}"); shift 2 ;;
        --only=*) parts+=("${1#--only=}"); shift ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "adoption-cost.sh: unknown option $1" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
for part in "${parts[@]}"; do
    case $part in resolve | run | build | runtime) ;; *) echo "adoption-cost.sh: --only resolve|run|build|runtime" >&2; exit 2 ;; esac
done
((${#parts[@]})) || parts=(resolve run build runtime)
wanted() { [[ " ${parts[*]} " == *" $1 "* ]]; }
((${#positional[@]} <= 2)) || { echo "usage: adoption-cost.sh [--only resolve|run|build|runtime]... [REPO] [REF]" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
repo=${positional[0]:-$(git -C "$here" rev-parse --show-toplevel)}
ref=${positional[1]:-HEAD}
limit=${ADOPTION_COST_TIMEOUT:-1200}

work=$(mktemp -d "${TMPDIR:-/tmp}/adoption-cost.XXXXXX")
run_pid=""
# The processes of session $1 (zombies left out).
session_pids() { ps -eo pid=,sid=,stat= | awk -v s="$1" '$2 == s && $3 !~ /^Z/ { print $1 }'; }
# Whether our child $1 still runs (not yet exited: a zombie has).
running() { [[ $(ps -o stat= -p "$1" 2>/dev/null) == [^Z]* ]]; }
# Stops what our child $1 runs in its own session (setsid): SIGTERM to its process group,
# SIGKILL after 10 s; reaps $1 and returns its status. Then ends what is left in the session:
# an interrupted build's compiler jobs (llbuild gives each a process group of its own).
# (No watchdog subshell: a signal sent to a child just forked can run the parent's traps.)
stop_run() {
    local status=0 i pids
    kill -TERM -- "-$1" 2>/dev/null || true
    for i in {1..50}; do running "$1" || break; sleep 0.2; done
    running "$1" && kill -KILL -- "-$1" 2>/dev/null
    wait "$1" 2>/dev/null || status=$?
    for i in {1..50}; do
        pids=$(session_pids "$1")
        [[ -n $pids ]] || return "$status"
        # shellcheck disable=SC2086
        kill "-$( ((i <= 15)) && echo TERM || echo KILL)" $pids 2>/dev/null || true
        sleep 0.2
    done
    echo "adoption-cost.sh: still running in session $1: $(session_pids "$1" | tr '\n' ' ')" >&2
    return "$status"
}
cleanup() {
    local status=$?
    [[ $BASHPID == "$$" ]] || exit "$status"  # only the script itself cleans up, never a subshell
    [[ -z $run_pid ]] || stop_run "$run_pid" || true
    if [[ ${ADOPTION_COST_KEEP:-0} == 1 ]]; then
        echo "kept $work" >&2
    else
        rm -rf "$work" 2>/dev/null || { sleep 2; rm -rf "$work"; }
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# SwiftPM leaves a lock file per cache entry in TMPDIR: keep them in the work directory.
mkdir "$work/tmp"
export TMPDIR=$work/tmp

# Seconds from $1 to $2 (both $EPOCHREALTIME), one decimal.
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
load() { echo "load: $(uptime | sed 's/.*load average: //') ($(nproc) cores)"; }
# A copy-able command line.
quoted() { local out="" a; for a in "$@"; do out+="${out:+ }$(printf '%q' "$a")"; done; echo "$out"; }

# Clones REPO at REF into $1 (whose last component must be swift-environments: a path
# dependency's identity is its directory's name). The first clone fixes REF's commit ($commit),
# so that both parts measure the same commit even if REF moves meanwhile.
commit=""
if [[ -d $repo ]]; then
    # A local REF (HEAD, a branch, a short hash) names the source's commit, not the clone's.
    commit=$(git -C "$repo" rev-parse --verify --quiet "$ref^{commit}" || true)
fi
clone() {
    local dir=$1
    git clone --quiet --no-checkout "$repo" "$dir"
    if [[ -z $commit ]]; then
        commit=$(git -C "$dir" rev-parse --verify --quiet "$ref^{commit}" ||
            git -C "$dir" rev-parse --verify --quiet "origin/$ref^{commit}") ||
            { echo "adoption-cost.sh: no commit $ref in $repo" >&2; exit 1; }
    fi
    git -C "$dir" cat-file -e "$commit^{commit}" 2>/dev/null || git -C "$dir" fetch --quiet origin "$commit"
    git -C "$dir" checkout --quiet --detach "$commit"
}

# The identities pinned in a Package.resolved.
pins() { sed -n 's/^ *"identity" *: *"\([^"]*\)".*/\1/p' "$1"; }

summary=()

# ---------------------------------------------------------------------------------------------
resolve_part() {
    local dep=$work/resolve/swift-environments probe=$work/resolve/probe
    local cache=$work/resolve/cache scratch=$work/resolve/scratch
    mkdir -p "$work/resolve" "$probe/Sources/probe" "$cache" "$scratch"
    clone "$dep"
    cat >"$probe/Package.swift" <<EOF
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "probe",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$dep")],
    targets: [
        .executableTarget(name: "probe", dependencies: [
            .product(name: "Environments", package: "swift-environments"),
        ]),
    ]
)
EOF
    cat >"$probe/Sources/probe/main.swift" <<'EOF'
import Environments

print(Environment.shared.fetch("APIBaseUrl") ?? "no APIBaseUrl")
EOF
    local cmd=(swift package resolve --cache-path "$cache" --scratch-path "$scratch")
    echo "== 1. packages resolved by a package that depends on Environments alone"
    echo "repository: $repo at $ref ($commit)"
    load
    echo "probe: $probe (one executable target, .product(name: \"Environments\", package: \"swift-environments\"),"
    echo "       .package(path: \"$dep\"))"
    echo "\$ cd $probe && $(quoted "${cmd[@]}")"
    local start end status=0
    start=$EPOCHREALTIME
    (cd "$probe" && timeout "$limit" "${cmd[@]}") >"$work/resolve.log" 2>&1 || status=$?
    end=$EPOCHREALTIME
    if ((status != 0)); then
        cat "$work/resolve.log" >&2
        echo "swift package resolve failed (status $status; 124 is the ${limit} s timeout)" >&2
        exit 1
    fi
    local resolved=$probe/Package.resolved names=() n all
    if [[ -f $resolved ]]; then
        mapfile -t names < <(pins "$resolved" | grep -vx swift-environments | sort)
    fi
    all=$( [[ -f $resolved ]] && pins "$resolved" | wc -l || echo 0)
    n=${#names[@]}
    local fetched
    fetched=$(grep -c '^Fetching ' "$work/resolve.log" || true)
    echo "resolved in $(seconds "$start" "$end") s; $all pins in Package.resolved, $n besides swift-environments"
    echo "(a path dependency is never pinned: swift-environments itself is not among the pins; SwiftPM fetched $fetched repositories)"
    ((n == 0)) || printf '  %s\n' "${names[@]}"
    load
    echo
    local list
    list=$(printf '%s, ' "${names[@]}")
    summary+=("packages resolved by a package using Environments alone: $n besides swift-environments (${list%, })"
        "    [cd PROBE && swift package resolve --cache-path EMPTY --scratch-path EMPTY: $(seconds "$start" "$end") s]")
    # CI's bound (issue 43: at most 8 with swift-environments itself, 7 besides it).
    if [[ -n ${ADOPTION_COST_MAX_PACKAGES:-} ]] && ((n > ADOPTION_COST_MAX_PACKAGES)); then
        echo "adoption-cost.sh: a package that uses Environments alone resolves $n packages besides swift-environments," \
            "more than ADOPTION_COST_MAX_PACKAGES=$ADOPTION_COST_MAX_PACKAGES: a dependency of the root package" \
            "that users of Environments do not need belongs behind a package trait (Package.swift's traits:," \
            "and .when(traits: [\"TRAIT\"]) on the products that use it)" >&2
        exit 1
    fi
}

# ---------------------------------------------------------------------------------------------
run_part() {
    local clone_dir=$work/run/swift-environments cache=$work/run/cache scratch=$work/run/scratch
    mkdir -p "$work/run" "$cache" "$scratch"
    clone "$clone_dir"
    echo "== 2. the README's first command, fresh clone, empty package cache, to the daemon's first log line"
    echo "repository: $repo at $ref ($commit)"
    echo "README: $(grep -m1 'swift run example-daemon' "$clone_dir/README.md" || echo '(no swift run example-daemon in the README)')"

    # The README's apt part: run only if its packages are missing (not timed with the rest).
    local missing=()
    for p in libsystemd-dev pkg-config; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        echo "apt part: libsystemd-dev and pkg-config are installed already; not run, not timed"
    elif ((EUID == 0)); then
        echo "apt part: ${missing[*]} missing; running it (timed apart, not in the figure):"
        echo "\$ apt-get update && apt-get install -y libsystemd-dev pkg-config"
        local a0=$EPOCHREALTIME
        { apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=600 libsystemd-dev pkg-config; } \
            >"$work/apt.log" 2>&1 || { cat "$work/apt.log" >&2; exit 1; }
        echo "apt part took $(seconds "$a0" "$EPOCHREALTIME") s"
    else
        echo "missing ${missing[*]}: run the README's apt-get line as root first" >&2
        exit 1
    fi

    local cmd=(swift run --cache-path "$cache" --scratch-path "$scratch" example-daemon)
    load
    echo "\$ cd $clone_dir && $(quoted "${cmd[@]}")"
    echo "(= the README's \`swift run example-daemon\`; the two flags only point SwiftPM's caches at empty directories)"

    # The daemon's log lines (LogLineFormatter.plain, standard error not the journal):
    # "2025-01-31T14:05:09.123+0100 info example-daemon: ...". SwiftPM prints nothing like it.
    local log_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+([+-][0-9:]+|Z)? (trace|debug|info|notice|warning|error|critical) example-daemon: '
    mkfifo "$work/run.fifo"
    local start now line t status
    start=$EPOCHREALTIME
    # setsid: swift run, and the daemon it executes, lead their own process group.
    (cd "$clone_dir" && exec setsid "${cmd[@]}") >"$work/run.fifo" 2>&1 </dev/null &
    run_pid=$!
    exec 3<"$work/run.fifo"
    local t_fetched="" t_build="" t_built="" t_first="" first="" note=""
    local -A fetched_urls=()
    local daemon_lines=()
    while :; do
        now=$EPOCHREALTIME
        local left
        left=$(awk -v a="$start" -v b="$now" -v l="$limit" 'BEGIN { x = l - (b - a); printf "%.2f", (x > 0 ? x : 0) }')
        if [[ $left == 0.00 ]]; then status=timeout; break; fi
        if IFS= read -r -t "$left" line <&3; then
            t=$(seconds "$start" "$EPOCHREALTIME")
            printf '%7s s  %s\n' "$t" "$line" >>"$work/run.log"
            [[ $line != "Fetching "* ]] || fetched_urls[${line#Fetching }]=1
            if [[ $line =~ $log_re ]]; then
                t_first=$t first=$line
                daemon_lines+=("$t s  $line")
                break
            elif [[ -n $t_built ]]; then
                # swift run prints nothing after the build: the next line is the program's.
                t_first=$t first=$line note=" (not in the expected log format)"; break
            elif [[ -z $t_build && $line =~ ^(Fetch|Comput|Creating\ working\ copy|Working\ copy) ]]; then
                t_fetched=$t  # the last of these: every package fetched and checked out
            elif [[ -z $t_build && $line == "Building for "* ]]; then
                t_build=$t
            elif [[ $line =~ ^Build\ (of\ product\ .*\ )?complete ]]; then
                t_built=$t
            fi
        else
            (($? > 128)) && status=timeout || status=eof
            break
        fi
    done
    if [[ -z $t_first ]]; then
        tail -40 "$work/run.log" >&2 || true
        if [[ $status == timeout ]]; then
            echo "no log line from the daemon within ${limit} s" >&2
        else
            echo "swift run ended before the daemon logged anything" >&2
        fi
        exit 1
    fi
    # A moment more of the daemon's output, then SIGTERM to the process group (stop_run).
    local until_=$(( ${EPOCHREALTIME%.*} + 3 ))
    while (( ${EPOCHREALTIME%.*} < until_ )) && IFS= read -r -t 1 line <&3; do
        daemon_lines+=("$(seconds "$start" "$EPOCHREALTIME") s  $line")
    done
    local term=$EPOCHREALTIME stopped
    kill -TERM -- "-$run_pid" 2>/dev/null || true
    # Drain until the daemon closes its output (at most 20 s), so that it never blocks on a
    # full pipe.
    local rc=0
    while :; do
        IFS= read -r -t 20 line <&3 || { rc=$?; break; }
        daemon_lines+=("$(seconds "$start" "$EPOCHREALTIME") s  $line")
    done
    if ((rc > 128)); then
        stopped="its output still open 20 s later"
    else
        stopped="it closed its output $(seconds "$term" "$EPOCHREALTIME") s later"
    fi
    exec 3<&-
    local exit_status=0
    stop_run "$run_pid" || exit_status=$?
    run_pid=""

    local fetched=${#fetched_urls[@]} cached pinned=0
    cached=$(find "$cache/repositories" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l)
    [[ -f $clone_dir/Package.resolved ]] && pinned=$(pins "$clone_dir/Package.resolved" | wc -l)
    echo "packages fetched and checked out at ${t_fetched:-?} s; \"Building for ...\" at ${t_build:-?} s; build complete at ${t_built:-?} s"
    echo "first log line at $t_first s$note:"
    echo "  $first"
    echo "the daemon's lines (seconds from the start):"
    printf '  %s\n' "${daemon_lines[@]:0:8}"
    echo "stopped with SIGTERM to its process group ($stopped); exit status $exit_status"
    echo "SwiftPM fetched $fetched packages (repositories now in the empty cache: $cached; pins in the clone's Package.resolved: $pinned)"
    load
    echo
    summary+=("README's first command, fresh clone, empty package cache, to first log line: $t_first s"
        "    [cd CLONE && swift run example-daemon (+ --cache-path EMPTY --scratch-path EMPTY): $fetched packages fetched by ${t_fetched:-?} s, build done at ${t_built:-?} s]")
}

# ---------------------------------------------------------------------------------------------
# Runs "$@" with each output line stamped with the seconds since $1 (an $EPOCHREALTIME) into
# file $2: `stamped START LOG command...`. Returns the command's status.
stamped() {
    local start=$1 log=$2 line
    shift 2
    local status=0
    while IFS= read -r line; do
        printf '%7s s  %s\n' "$(seconds "$start" "$EPOCHREALTIME")" "$line"
    done < <(timeout "$limit" "$@" 2>&1; echo "__status $?") >"$log"
    status=$(sed -n 's/^ *[0-9.]* s  __status //p' "$log")
    sed -i '/  __status [0-9]*$/d' "$log"
    return "${status:-1}"
}

# ICU's symbols (ucol_open_74, icu_74::...) and the Foundation module's in executable $1.
symbol_counts() {
    local icu foundation
    icu=$(nm "$1" 2>/dev/null | grep -cE ' [TtDdBbRr] (u[a-z]+|icu_[0-9]+)[_A-Za-z0-9]*_7[0-9]$' || true)
    foundation=$(nm "$1" 2>/dev/null | grep -c ' \$s10Foundation' || true)
    echo "$icu ICU symbols, $foundation of the Foundation module"
}

build_part() {
    local clone_dir=$work/build/swift-environments cache=$work/build/cache scratch=$work/build/scratch
    local stats=$work/build/stats
    mkdir -p "$work/build" "$cache" "$scratch" "$stats"
    clone "$clone_dir"
    echo "== 3. static release builds of envctl and example-daemon, fresh clone, packages fetched"
    echo "repository: $repo at $ref ($commit)"
    # The packages fetched first, untimed: a user who has resolved once (a warm package cache).
    (cd "$clone_dir" && timeout "$limit" swift package resolve --cache-path "$cache" --scratch-path "$scratch") \
        >"$work/build-resolve.log" 2>&1 || { cat "$work/build-resolve.log" >&2; echo "swift package resolve failed" >&2; exit 1; }
    local flags=(-c release --static-swift-stdlib --cache-path "$cache" --scratch-path "$scratch"
        -Xswiftc -stats-output-dir -Xswiftc "$stats")
    local product start end bin size
    for product in envctl example-daemon; do
        load
        echo "\$ cd $clone_dir && $(quoted swift build --product "$product" "${flags[@]}")"
        echo "(= swift build -c release --product $product --static-swift-stdlib; the stats flag makes the compiler"
        echo " write its timers, the others move the caches)"
        start=$EPOCHREALTIME
        (cd "$clone_dir" && stamped "$start" "$work/build-$product.log" swift build --product "$product" "${flags[@]}") || {
            tail -40 "$work/build-$product.log" >&2; echo "the release build of $product failed" >&2; exit 1; }
        end=$EPOCHREALTIME
        bin=$scratch/release/$product
        size=$(stat -c %s "$bin")
        # The link: from the end of the last compile (the newest statistics file, which each
        # swift-frontend writes as it exits) to the end of the build. SwiftPM's `Linking` line
        # is no clock: through a pipe, its progress lines arrive when the build ends.
        local linked last_compile
        last_compile=$(find "$stats" -type f -printf '%T@\n' | sort -n | tail -1)
        linked=$(awk -v end="$end" -v last="$last_compile" 'BEGIN { if (last != "") printf "%.1f", end - last }')
        echo "built in $(seconds "$start" "$end") s (the link: ${linked:-?} s); $size bytes unstripped" \
            "($(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }') MB); $(symbol_counts "$bin")"
        if [[ $product == envctl ]]; then
            echo "the compiler's time by module (swift-frontend, wall, from its statistics):"
            python3 - "$stats" "$start" <<'EOF'
import json, os, re, sys
walls, spans = {}, []
for name in os.listdir(sys.argv[1]):
    with open(os.path.join(sys.argv[1], name)) as f:
        stats = json.load(f)
    # stats-<start, microseconds since the epoch>-swift-frontend-<module>-...json
    started = int(name.split("-")[1]) / 1e6 - float(sys.argv[2])
    for key, value in stats.items():
        m = re.match(r"time\.swift-frontend\.(.+?)(-all)?-[a-z0-9_]+-o-O\.wall$", key)
        if m:
            walls[m.group(1)] = walls.get(m.group(1), 0.0) + value
            spans.append((started, started + value, m.group(1)))
total = sum(walls.values())
print(f"  {len(walls)} modules, {total:.1f} s of compiling in all (on {os.cpu_count()} cores at once)")
for module, wall in sorted(walls.items(), key=lambda kv: -kv[1])[:12]:
    print(f"  {wall:7.1f} s  {100 * wall / total:4.1f}%  {module}")
# When each compile ran, from the build's start: the chain that sets the build's time is the
# modules that wait on each other, not the largest ones (a plugin's tool comes first, alone).
print("when each compile ran (s from the build's start):")
for begin, end, module in sorted(spans):
    print(f"  {begin:6.1f} - {end:6.1f}  {module}")
EOF
            summary+=("envctl's static release build, packages fetched: $(seconds "$start" "$end") s (goal 120), $size bytes (goal 60 MB); $(symbol_counts "$bin")"
                "    [cd CLONE && swift build -c release --product envctl --static-swift-stdlib]")
        else
            summary+=("example-daemon's static release build after envctl's: $(seconds "$start" "$end") s, $size bytes (goal 40 MB); $(symbol_counts "$bin")"
                "    [cd CLONE && swift build -c release --product example-daemon --static-swift-stdlib]")
        fi
        rm -rf "${stats:?}"/*
        echo
    done
}

# ---------------------------------------------------------------------------------------------
runtime_part() {
    echo "== 4. heap bytes per key and cold start (environment-benchmarks --only memory --only cold)"
    local bench=${ADOPTION_COST_BENCHMARKS:-}
    if [[ -z $bench ]]; then
        local clone_dir=$work/runtime/swift-environments
        mkdir -p "$work/runtime"
        clone "$clone_dir"
        echo "\$ cd $clone_dir && swift build -c release --package-path Benchmarks --product environment-benchmarks"
        local start=$EPOCHREALTIME
        (cd "$clone_dir" && timeout "$limit" swift build -c release --package-path Benchmarks --product environment-benchmarks) \
            >"$work/runtime-build.log" 2>&1 || { tail -40 "$work/runtime-build.log" >&2; echo "the benchmarks' build failed" >&2; exit 1; }
        echo "(built in $(seconds "$start" "$EPOCHREALTIME") s, not a figure)"
        bench=$clone_dir/Benchmarks/.build/release/environment-benchmarks
    else
        echo "environment-benchmarks: $bench (ADOPTION_COST_BENCHMARKS)"
    fi
    load
    echo "\$ $bench --only memory --only cold --json"
    timeout "$limit" "$bench" --only memory --only cold --json >"$work/runtime.json" 2>"$work/runtime.log" || {
        tail -40 "$work/runtime.log" >&2; echo "environment-benchmarks failed" >&2; exit 1; }
    local lines
    lines=$(python3 - "$work/runtime.json" <<'EOF'
import json, re, sys
report = json.load(open(sys.argv[1]))
memory = report.get("memory", {})
if memory:
    print(f"heap bytes per key at {memory['keys']:,} keys: ours {memory['bytes_per_key_ours']:.0f} (goal 160), "
          f"swift-configuration {memory['bytes_per_key_swift_configuration']:.0f}, "
          f"[String: String] {memory['bytes_per_key_dictionary']:.0f}")
cold = report.get("cold_ms", {})
sizes = sorted({int(m.group(1)) for k in cold for m in [re.search(r"_(\d+)$", k)] if m})
for n in sizes:
    ours = cold.get(f"ours_{n}")
    parts = [f"ours {ours} ms"]
    floor = next((v for k, v in cold.items() if re.match(rf"(floor|parse\w*)_{n}$", k)), None)
    if floor:
        parts.append(f"the parse alone {floor} ms (ours is {ours / floor:.2f}x it; goal at most 2x)")
    peer = cold.get(f"swift_configuration_{n}")
    if peer:
        parts.append(f"swift-configuration {peer} ms (ours {peer / ours:.1f}x faster; goal at least 5x)")
    print(f"cold start, {n:,} keys (median, each in a new process): " + "; ".join(parts))
EOF
)
    echo "$lines"
    load
    echo
    while IFS= read -r line; do summary+=("$line"); done <<<"$lines"
    summary+=("    [environment-benchmarks --only memory --only cold --json]")
}

echo "adoption-cost: $(date -u +%FT%TZ), $(swift --version 2>&1 | head -1)"
echo
wanted resolve && resolve_part
wanted run && run_part
wanted build && build_part
wanted runtime && runtime_part

echo "== summary: $repo at $ref (${commit:0:12}); $(load)"
printf '%s\n' "${summary[@]}"
