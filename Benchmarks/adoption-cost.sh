#!/bin/bash
# What adopting the package costs a new user (issue 43), from a fresh clone of REPO at REF
# (default: the repository this script is in, at HEAD; committed state only) and an empty
# package cache:
#
#   1. resolve: the packages SwiftPM resolves for a new package that depends on the
#      `Environments` product alone (by path, so no tag is needed; no `traits:`, so none of the
#      package's traits, Fleet, SwiftConfiguration and Vapor, and none of their dependencies),
#      and how long `swift package resolve` takes. (scripts/check-consumers.sh counts the same
#      by URL from a tagged clone, with swift-environments among the pins.)
#   2. run: the README's first command, `swift run example-daemon`, in a fresh clone: seconds
#      from its start to the daemon's first log line, and the packages SwiftPM fetched for it.
#      The daemon is then stopped (SIGTERM to its process group).
#
#     Benchmarks/adoption-cost.sh [--only resolve|run] [REPO] [REF]
#
# SwiftPM's shared cache (~/.cache/org.swift.swiftpm) is never used: every SwiftPM command gets
# `--cache-path` and `--scratch-path` pointing at new, empty directories; the flags only move
# the caches, the commands are the user's. (`--disable-dependency-cache` alone is not enough:
# SwiftPM still reads and writes the shared manifest cache, ~/.cache/.../manifests/manifest.db.)
# The compiler's module cache (~/.cache/clang/ModuleCache) is shared; it is not a package cache.
#
# Environment: ADOPTION_COST_TIMEOUT (seconds, default 1200) bounds each part;
# ADOPTION_COST_MAX_PACKAGES=N fails the resolve part when more than N packages besides
# swift-environments are resolved (.ci/run: 7, so at most 8 with swift-environments itself);
# ADOPTION_COST_KEEP=1 keeps the temporary directory.
set -euo pipefail
export LC_NUMERIC=C

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

only=""
positional=()
while (($#)); do
    case $1 in
        --only) only=${2:?--only takes resolve or run}; shift 2 ;;
        --only=*) only=${1#--only=}; shift ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "adoption-cost.sh: unknown option $1" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
case $only in "" | resolve | run) ;; *) echo "adoption-cost.sh: --only resolve|run" >&2; exit 2 ;; esac
((${#positional[@]} <= 2)) || { echo "usage: adoption-cost.sh [--only resolve|run] [REPO] [REF]" >&2; exit 2; }

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

echo "adoption-cost: $(date -u +%FT%TZ), $(swift --version 2>&1 | head -1)"
echo
[[ $only == run ]] || resolve_part
[[ $only == resolve ]] || run_part

echo "== summary: $repo at $ref (${commit:0:12}); $(load)"
printf '%s\n' "${summary[@]}"
