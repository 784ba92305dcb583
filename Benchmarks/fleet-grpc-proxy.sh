#!/bin/bash
# What etcd's gRPC proxy does for many watches of the fleet's keys (issue 24.4). The proxy
# speaks gRPC only (no JSON gateway), so the watches here are etcdctl's, not the fleet client's:
# 500 gRPC watches (etcdctl watch -i, N_PROC processes x PER watches) on a 3-member etcd on
# loopback ports 46101-46110 (BASE_PORT), first with none, then directly on member 1, then
# through one `etcd grpc-proxy start`. For each: etcd's CPU (clock ticks of 10 ms, all
# members) over CHANGES transactions, the proxy's, the watchers each member counts; then IDLE s
# idle, and the VmRSS of each. Kills what it started and removes its directory at the end.
#
#   Benchmarks/fleet-grpc-proxy.sh        (N_PROC=10 PER=50 CHANGES=40 BASE_PORT=46100 IDLE=20)
set -u
N_PROC=${N_PROC:-10}; PER=${PER:-50}; CHANGES=${CHANGES:-40}; BASE=${BASE_PORT:-46100}; IDLE=${IDLE:-20}
D=$(mktemp -d /tmp/proxybench-XXXX); cd $D
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 $p 2>/dev/null; done; wait 2>/dev/null; [ -z "$KEEP" ] && rm -rf $D; }
trap cleanup EXIT
KEEP=${KEEP:-}  # non-empty: keep the directory (logs)
C=($((BASE+1)) $((BASE+3)) $((BASE+5))); P=($((BASE+2)) $((BASE+4)) $((BASE+6))); PX=$((BASE+10))
cluster=m1=http://127.0.0.1:${P[0]},m2=http://127.0.0.1:${P[1]},m3=http://127.0.0.1:${P[2]}
for i in 0 1 2; do
  /usr/bin/etcd --name m$((i+1)) --data-dir m$i --listen-client-urls http://127.0.0.1:${C[$i]} --advertise-client-urls http://127.0.0.1:${C[$i]} \
    --listen-peer-urls http://127.0.0.1:${P[$i]} --initial-advertise-peer-urls http://127.0.0.1:${P[$i]} --initial-cluster $cluster \
    --initial-cluster-state new --heartbeat-interval 50 --election-timeout 500 --log-level warn > m$i.log 2>&1 &
  PIDS+=($!); MP[$i]=$!
done
sleep 3
/usr/bin/etcd grpc-proxy start --endpoints=127.0.0.1:${C[0]} --listen-addr=127.0.0.1:$PX --data-dir proxy > proxy.log 2>&1 &
PIDS+=($!); PROXY=$!
sleep 2
E1=http://127.0.0.1:${C[0]}
curl -s -X POST $E1/v3/kv/put -d '{"key":"L2ZsZWV0L3gvRW52aXJvbm1lbnRzLnBsaXN0","value":"MA=="}' > /dev/null
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
total() { local s=0; for p in ${MP[0]} ${MP[1]} ${MP[2]}; do s=$((s+$(cpu $p))); done; echo $s; }
watchers() { for c in ${C[@]}; do curl -s http://127.0.0.1:$c/metrics | awk '/^etcd_debugging_mvcc_watcher_total /{printf "%s ", $2}'; done; }
changes() { for n in $(seq 1 $CHANGES); do v=$(printf 'change %d' $n | base64); curl -s -X POST $E1/v3/kv/txn -d "{\"success\":[{\"request_put\":{\"key\":\"L2ZsZWV0L3gvRW52aXJvbm1lbnRzLnBsaXN0\",\"value\":\"$v\"}}]}" > /dev/null; sleep 0.05; done; }
measure() { # $1 label
  sleep 2
  local b=$(total) pb=$(cpu $PROXY) t0=$(date +%s.%N)
  changes
  sleep 1
  local a=$(total) pa=$(cpu $PROXY) t1=$(date +%s.%N)
  echo "$1: etcd CPU ticks (1/100 s) over $CHANGES changes: $((a-b)); proxy: $((pa-pb)); watchers by member: $(watchers); seconds $(echo "$t1 - $t0" | bc)"
  local ib=$(total) ipb=$(cpu $PROXY); sleep $IDLE; local ia=$(total) ipa=$(cpu $PROXY)
  echo "$1: idle $IDLE s: etcd ticks $((ia-ib)); proxy $((ipa-ipb)); etcd VmRSS kB: $(for p in ${MP[@]}; do awk '/VmRSS/{printf "%s ", $2}' /proc/$p/status; done) proxy VmRSS kB: $(awk '/VmRSS/{print $2}' /proc/$PROXY/status)"
}
start_watchers() { # $1 endpoint
  WP=()
  for i in $(seq 1 $N_PROC); do
    rm -f f$i; mkfifo f$i
    ETCDCTL_API=3 etcdctl --endpoints=$1 watch -i < f$i > /dev/null 2>&1 &
    WP+=($!); PIDS+=($!)
    exec {fd}>f$i; FD[$i]=$fd
    for j in $(seq 1 $PER); do echo "watch --prefix /fleet/x/" >&$fd; done
  done
}
stop_watchers() {
  for p in "${WP[@]}"; do kill -9 $p 2>/dev/null; wait $p 2>/dev/null; done
  for i in $(seq 1 $N_PROC); do eval "exec ${FD[$i]}>&-"; done
  sleep 2
}
measure "no watcher"
start_watchers $E1; sleep 3
measure "$((N_PROC*PER)) gRPC watches on member 1"
stop_watchers $E1
start_watchers 127.0.0.1:$PX; sleep 3
measure "$((N_PROC*PER)) gRPC watches through one grpc-proxy"
stop_watchers 127.0.0.1:$PX
