#!/bin/bash
# What keys under the fleet's prefix outside the layout cost a fleet read (issue 24.7): the
# wall time and CPU time of `envctl get` (one fleet read, as a daemon's start does, plus
# building the configuration) against a local three-member etcd, with the fleet's one small
# document alone, then with 50 blobs of 1.3 MB beside it. Median of RUNS (default 5).
#
#     Benchmarks/fleet-foreign-keys.sh ENVCTL [ENVCTL...] [-- RUNS]
#
# Give several envctl binaries (an older build, this one) to compare them side by side. The
# cluster runs on free loopback ports in a temporary directory and is killed at the end.
set -euo pipefail
binaries=()
runs=5
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then runs="$2"; break; fi
    binaries+=("$1"); shift
done
[ ${#binaries[@]} -gt 0 ] || { echo "usage: $0 ENVCTL [ENVCTL...] [-- RUNS]" >&2; exit 2; }
dir="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cluster=""; endpoints=""
declare -a client peer
for i in 1 2 3; do
    client[$i]=$(port); peer[$i]=$(port)
    cluster+="${cluster:+,}m$i=http://127.0.0.1:${peer[$i]}"
    endpoints+="${endpoints:+,}http://127.0.0.1:${client[$i]}"
done
for i in 1 2 3; do
    etcd --name "m$i" --data-dir "$dir/m$i" --log-level warn \
        --listen-client-urls "http://127.0.0.1:${client[$i]}" --advertise-client-urls "http://127.0.0.1:${client[$i]}" \
        --listen-peer-urls "http://127.0.0.1:${peer[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${peer[$i]}" \
        --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token bench \
        >>"$dir/etcd.log" 2>&1 &
    pids+=($!)
done
export ETCDCTL_API=3
until etcdctl --endpoints "$endpoints" put /health ok >/dev/null 2>&1; do sleep 0.2; done
prefix=/fleet/bench/
etcdctl --endpoints "$endpoints" put "${prefix}Environments.plist" \
    '<plist version="1.0"><dict><key>Common</key><dict><key>Region</key><string>eu</string></dict><key>Production</key><dict/></dict></plist>' >/dev/null
mkdir -p "$dir/host"

measure() {  # label
    for binary in "${binaries[@]}"; do
        rm -f "$dir/times"
        status=0
        for _ in $(seq "$runs"); do
            /usr/bin/time -f "%e %U %S" -a -o "$dir/times" "$binary" get Region --config-dir "$dir/host" \
                --environment Production --etcd-endpoints "$endpoints" --etcd-prefix "$prefix" \
                >"$dir/out" 2>&1 || status=$?
        done
        python3 - "$1" "$binary" "$status" "$dir/times" "$dir/out" <<'EOF'
import statistics, sys
label, binary, status, times, out = sys.argv[1:]
rows = [list(map(float, line.split())) for line in open(times) if line.strip() and line[0].isdigit()]
wall = statistics.median(r[0] for r in rows) * 1000
cpu = statistics.median(r[1] + r[2] for r in rows) * 1000
result = open(out).read().strip().splitlines()[-1][:160] if status != "0" else "ok"
print(f"{label:<32} {binary:<40} wall {wall:7.0f} ms  cpu {cpu:7.0f} ms  {result}")
EOF
    done
}

measure "one document"
blob="$dir/blob"
head -c 1300000 /dev/zero | tr '\0' x >"$blob"
for n in $(seq 0 49); do etcdctl --endpoints "$endpoints" put "${prefix}blobs/$n" <"$blob" >/dev/null; done
measure "one document + 50 x 1.3 MB"
