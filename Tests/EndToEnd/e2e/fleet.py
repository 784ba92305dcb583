"""Scenario 14: fleet mode under systemd. An etcd (the host's Debian etcd, a static binary)
runs inside the container, in its own network namespace; `envctl publish` writes the fleet's
document; `example-daemon-fleet.service` (the shipped unit, with a drop-in naming that etcd)
starts from it and applies a second publish through its watch, which `envctl history` names by
its revision. The daemon reports its status under its machine id (`envctl fleet status`), and a
staged publish (`envctl publish --stage 1,100%`) reaches it through the unit's sandbox."""

import json
import os
import plistlib
import re
import shutil

from .common import APPLIED_ID, CONFIG_DIR, ROOT, wait_for
from .journal import first

FLEET_UNIT = "example-daemon-fleet.service"
ETCD_UNIT = "e2e-etcd.service"
ENDPOINT = "http://127.0.0.1:2379"
PREFIX = "/fleet/example-daemon/"
DOCUMENT = "/root/fleet/Environments.plist"


def fleet_document(host):
    return plistlib.dumps({
        "Common": {"APIHost": host, "APIBaseUrl": f"https://{host}/v1", "LogLevel": "info"},
        "Release": {}, "Debug": {},
    }, fmt=plistlib.FMT_XML)


def publish(h, s, host, what, options=()):
    """Writes the document and publishes it; the revision it was written at."""
    h.container.write_atomic(DOCUMENT, fleet_document(host))
    result = h.container.run(
        ["envctl", "publish", "--etcd-endpoints", ENDPOINT, "--etcd-prefix", PREFIX, *options, DOCUMENT])
    s.require(result.returncode == 0, f"{what}: envctl publish exit status 0 ({result.stdout.strip()} {result.stderr.strip()})")
    # The last: a staged publish names the candidate's revision first, then the final one.
    found = re.findall(r"at revision (\d+)", result.stdout)
    s.require(bool(found), f"{what}: envctl publish names the revision: {result.stdout.strip()!r}")
    return int(found[-1])


def scenario_14(h, s):
    h.stop_and_restore(s)
    if not os.path.exists(h.container.host_path("/usr/local/bin/example-fleet-daemon")):
        s.check(False, "example-fleet-daemon is among the binaries (scripts/build-release.sh builds it)")
        return
    s.require(os.path.exists("/usr/bin/etcd"), "the host's etcd (apt-get install etcd-server)")
    for tool in ("etcd", "etcdctl"):
        shutil.copyfile(f"/usr/bin/{tool}", h.container.host_path(f"/usr/local/bin/{tool}"))
        os.chmod(h.container.host_path(f"/usr/local/bin/{tool}"), 0o755)
    # The host has no files of its own: everything comes from the fleet.
    shutil.rmtree(h.container.host_path(CONFIG_DIR))
    os.makedirs(h.container.host_path(CONFIG_DIR))
    os.makedirs(h.container.host_path(os.path.dirname(DOCUMENT)), exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "systemd", FLEET_UNIT), h.container.host_path(f"/etc/systemd/system/{FLEET_UNIT}"))
    dropins = h.container.host_path(f"/etc/systemd/system/{FLEET_UNIT}.d")
    os.makedirs(dropins, exist_ok=True)
    with open(os.path.join(dropins, "e2e.conf"), "w") as handle:
        # A status TTL of 5 s: the staged publish below settles for it.
        handle.write(f"[Service]\nEnvironment=ENVIRONMENTS_ETCD_ENDPOINTS={ENDPOINT}\n"
                     "Environment=ENVIRONMENTS_ETCD_STATUS_TTL=5\n")
    try:
        started = h.container.run([
            "systemd-run", f"--unit={ETCD_UNIT}", "--property=StateDirectory=e2e-etcd", "/usr/local/bin/etcd",
            "--name", "e2e", "--data-dir", "/var/lib/e2e-etcd/data", "--listen-client-urls", ENDPOINT,
            "--advertise-client-urls", ENDPOINT, "--listen-peer-urls", "http://127.0.0.1:2380",
            "--initial-advertise-peer-urls", "http://127.0.0.1:2380", "--initial-cluster", "e2e=http://127.0.0.1:2380",
            "--log-level", "warn",
        ])
        s.require(started.returncode == 0, f"etcd started in the container ({started.stderr.strip()})")
        healthy = wait_for(lambda: h.container.run(
            ["etcdctl", "--endpoints", ENDPOINT, "endpoint", "health"], env={"ETCDCTL_API": "3"}).returncode == 0, 20.0)
        s.require(healthy, "etcd answers in the container")
        first_revision = publish(h, s, "fleet-1.example.com", "first publish")
        s.require(h.systemctl("daemon-reload").returncode == 0, "systemctl daemon-reload")
        mark = h.cursor()
        result = h.systemctl("start", FLEET_UNIT)
        s.require(result.returncode == 0, f"systemctl start {FLEET_UNIT} ({result.stderr.strip()})")
        got = h.container.run(["envctl", "get", "APIHost", "--app-name", "example-daemon"])
        s.equal(got.stdout.strip(), "fleet-1.example.com", "the fleet's APIHost in the running daemon")
        shown = h.container.run(["envctl", "show", "--app-name", "example-daemon"])
        s.check(f"etcd:{PREFIX}Environments.plist@{first_revision}" in shown.stdout,
                f"envctl show names the fleet document and its revision as the source: {shown.stdout[:400]!r}")

        second_revision = publish(h, s, "fleet-2.example.com", "second publish")
        applied = wait_for(lambda: h.container.run(
            ["envctl", "get", "APIHost", "--app-name", "example-daemon"]).stdout.strip() == "fleet-2.example.com", 10.0)
        s.check(applied, "the second publish is applied through the watch within 10 s")
        entries = h.wait_entries(
            mark, lambda e: first(e, "MESSAGE_ID") == APPLIED_ID and first(e, "CONFIG_TRIGGER") == "fleet",
            source=lambda after: [e for e in h.journal(after) if first(e, "_SYSTEMD_UNIT") == FLEET_UNIT])
        if s.check(bool(entries), "an applied entry with CONFIG_TRIGGER=etcd in the journal"):
            s.equal(first(entries[-1], "CONFIG_FLEET_REVISION"), str(second_revision), "its CONFIG_FLEET_REVISION")
        history = h.container.run(["envctl", "history", "--app-name", "example-daemon"])
        s.check(f"applied  fleet revision {second_revision}: 2 keys changed" in history.stdout,
                f"envctl history names the fleet revision: {history.stdout!r}")
        s.check("    APIHost: fleet-1.example.com -> fleet-2.example.com" in history.stdout.splitlines(),
                "envctl history shows the fleet's change")

        # The daemon reports what it runs under its machine id; envctl fleet status reads it.
        def fleet_status():
            result = h.container.run(
                ["envctl", "fleet", "status", "--json", "--etcd-endpoints", ENDPOINT, "--etcd-prefix", PREFIX])
            try:
                return result.returncode, json.loads(result.stdout)
            except ValueError:
                return result.returncode, None

        machine_id = open(h.container.host_path("/etc/machine-id")).read().strip()

        def reports(revision):
            code, report = fleet_status()
            return code == 0 and report is not None and any(
                host["host"] == machine_id and host.get("revision") == revision and host["current"]
                for host in report["hosts"])

        s.check(wait_for(lambda: reports(second_revision), 15.0),
                f"envctl fleet status: the daemon reports revision {second_revision} under its machine id, "
                f"current, exit 0: {fleet_status()!r}")
        # A staged publish: the one host is the first stage; it settles for its TTL (5 s), then
        # envctl writes the candidate as the fleet's documents.
        third_revision = publish(h, s, "fleet-3.example.com", "staged publish",
                                 options=("--stage", "1,100%", "--settle", "1s"))
        s.check(wait_for(lambda: h.container.run(
            ["envctl", "get", "APIHost", "--app-name", "example-daemon"]).stdout.strip() == "fleet-3.example.com", 10.0),
            "the staged publish is applied")
        s.check(wait_for(lambda: reports(third_revision), 15.0),
                f"envctl fleet status: the daemon runs the staged publish's final revision {third_revision}: "
                f"{fleet_status()!r}")
    finally:
        h.systemctl("stop", FLEET_UNIT)
        h.systemctl("stop", ETCD_UNIT)
        shutil.rmtree(dropins, ignore_errors=True)
        with_unit = h.container.host_path(f"/etc/systemd/system/{FLEET_UNIT}")
        if os.path.exists(with_unit):
            os.remove(with_unit)
        h.systemctl("daemon-reload")
