#!/usr/bin/env python3
"""What HOSTS status keys (`PREFIX/.status/HOST`), their leases and ROUNDS rewrites of each cost
one etcd member in memory and in its backend, with the history kept, then compacted and
defragmented (issue 37.4; the EnvironmentsEtcd article "Fleet capacity" quotes it).

    Benchmarks/fleet-status-history.py [HOSTS [ROUNDS]]     (default 10000 10)

A single-member etcd (/usr/bin/etcd) on free loopback ports in a temporary directory, killed at
the end; puts through its JSON gateway, as the daemons write, with a value of a daemon's size.
Prints the revision, the backend's size (etcd_mvcc_db_total_size_in_bytes, and in use) and the
member's VmRSS after each step.
"""
import base64, json, http.client, os, re, shutil, socket, subprocess, sys, tempfile, time

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

HOSTS = max(1, int(sys.argv[1])) if len(sys.argv) > 1 else 10000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
d = tempfile.mkdtemp(prefix="status-history-")
cp, pp = free_port(), free_port()
etcd = subprocess.Popen(["/usr/bin/etcd", "--name", "s", "--data-dir", d + "/s",
    "--listen-client-urls", f"http://127.0.0.1:{cp}", "--advertise-client-urls", f"http://127.0.0.1:{cp}",
    "--listen-peer-urls", f"http://127.0.0.1:{pp}", "--initial-advertise-peer-urls", f"http://127.0.0.1:{pp}",
    "--initial-cluster", f"s=http://127.0.0.1:{pp}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    conn = None
    for _ in range(100):
        try:
            conn = http.client.HTTPConnection("127.0.0.1", cp, timeout=10); conn.request("GET", "/health")
            if conn.getresponse().read(): break
        except OSError: time.sleep(0.1)
    def post(path, body):
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = conn.getresponse(); data = r.read()
        if r.status != 200: raise SystemExit(f"{path}: {r.status} {data[:200]}")
        return json.loads(data)
    def b64(s): return base64.b64encode(s.encode()).decode()
    def state(label):
        conn.request("GET", "/metrics"); text = conn.getresponse().read().decode()
        def metric(name): return float(re.search(r"^" + name + r" (\S+)$", text, re.M).group(1))
        rss = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{etcd.pid}/status").read()).group(1))
        print(f"{label:52s} revision {metric('etcd_debugging_mvcc_current_revision'):>9.0f}  "
              f"db {metric('etcd_mvcc_db_total_size_in_bytes')/2**20:7.1f} MiB (in use "
              f"{metric('etcd_mvcc_db_total_size_in_use_in_bytes')/2**20:7.1f})  VmRSS {rss/1024:6.1f} MiB", flush=True)
    # A value like a daemon's: about 450 bytes of JSON.
    def value(host, n):
        return json.dumps({"schema": 1, "host": f"{host:032x}", "revision": 1000 + n, "fingerprint": "9f3c2a7e01b4d655",
            "generation": n, "environment": "Production", "last": {"outcome": "applied", "revision": 1000 + n,
            "fingerprint": "9f3c2a7e01b4d655", "at": "2026-11-27T05:00:00Z"}, "version": "1.4.0", "library": "0.2.0",
            "renewed": "2026-11-27T05:00:%02dZ" % (n % 60), "ttl": 30, "refresh": 60}, sort_keys=True)
    state("empty")
    leases = []
    for h in range(HOSTS):
        leases.append(post("/v3/lease/grant", {"TTL": 3600})["ID"])
    state(f"{HOSTS} leases granted")
    t = time.time()
    for h in range(HOSTS):
        post("/v3/kv/put", {"key": b64(f"/fleet/example/.status/{h:032x}"), "value": b64(value(h, 0)), "lease": leases[h]})
    state(f"{HOSTS} status keys written ({HOSTS/(time.time()-t):.0f} puts/s)")
    for r in range(1, ROUNDS + 1):
        for h in range(HOSTS):
            post("/v3/kv/put", {"key": b64(f"/fleet/example/.status/{h:032x}"), "value": b64(value(h, r)), "lease": leases[h]})
        if r in (1, max(1, ROUNDS // 2), ROUNDS): state(f"rewritten {r} times (history kept)")
    rev = post("/v3/kv/range", {"key": b64("x")})["header"]["revision"]
    post("/v3/kv/compaction", {"revision": rev, "physical": True})
    time.sleep(2)
    state("compacted to the newest revision")
    post("/v3/maintenance/defragment", {})
    state("defragmented")
finally:
    etcd.kill(); etcd.wait(); shutil.rmtree(d, ignore_errors=True)
