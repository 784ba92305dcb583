#!/usr/bin/env python3
"""End-to-end test of Examples/hummingbird-service under a real systemd 257.

A Hummingbird 2 server that reads its listen address and its route answers through
swift-configuration's ConfigReader over EnvironmentProvider, kept live by EnvironmentService,
run as systemd/hummingbird-service.service (Type=notify-reload, hardened) in a Debian trixie
container:

  start        systemctl start returns active; StatusText names the environment, generation 1;
               READY=1 only once the port accepts (ExecStartPost= connects once, and so does
               the test right after systemctl start returns)
  request      GET /greeting on loopback answers the configured Greeting; /config agrees
  file edit    an edit (temporary file + rename) is answered without a restart, same MainPID
  reload       an edit + systemctl reload: when reload returns, the route answers the new value
  port         a changed HTTP.port is reported as pending a restart; the old port still answers
  metrics      GET /metrics is Prometheus text; the reload metrics count the edit and the reload
  stop         systemctl stop: inactive, Result=success, the control socket removed
  bind fails   the port taken by another listener (Restart=no): systemctl start fails, the unit
               ends failed with exit status 1, and it never became active (no READY=1)

Reuses the e2e package's containers and root file systems (and run_e2e.py's build). Python 3 standard library only.

  sudo python3 Tests/EndToEnd/run_hummingbird_e2e.py [--binary PATH] [-v]
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_service_e2e  # noqa: E402
from example_service_e2e import reload_count  # noqa: E402
from e2e.common import PENDING_ID  # noqa: E402
from e2e.journal import first  # noqa: E402

UNIT = "hummingbird-service.service"
SOCKET = "/run/hummingbird-service/configuration.varlink"


def scenario(run, port):
    c = run.c
    # READY=1 once the server accepts connections: the port accepts one at once when
    # systemctl start returns, and ExecStartPost= (run on READY=1) connects without retrying.
    run.require_serving_when_ready(port)
    main_pid = run.start("notify-reload", port=port).get("MainPID")

    run.check_first_answers(
        port, {"environment": "Release", "generation": 1, "greeting": "first greeting", "port": port})

    # A file edit alone: the next answers have the new value, no restart.
    run.write_plist("edited greeting", port)
    answer, ok = run.wait_get(port, "/greeting", lambda a: a == "edited greeting")
    run.check(ok, f"after a file edit, GET /greeting answers the new value without a restart: {answer!r}")
    run.check(run.show("MainPID").get("MainPID") == main_pid, "same MainPID after the edit")

    # An edit and systemctl reload at once: when reload returns, the value is served.
    run.write_plist("reloaded greeting", port)
    result = run.systemctl("reload", UNIT)
    answer = run.get(port, "/greeting")
    run.check(result.returncode == 0, f"systemctl reload exit status ({result.stderr.strip()!r})")
    run.check(answer == "reloaded greeting", f"right after systemctl reload returned, GET /greeting: {answer!r}")
    status = run.show("StatusText").get("StatusText", "")
    run.check(status.startswith("Environment Release, configuration generation "), f"StatusText after the reload: {status!r}")

    # The listen port is restart-only: reported as pending; the server stays where it is.
    other = example_service_e2e.free_port()
    mark = c.run(["journalctl", "--show-cursor", "-n", "0", "--no-pager"]).stdout.strip().split("cursor: ")[-1]
    run.write_plist("reloaded greeting", other)
    deadline, pending = time.monotonic() + 5, []
    while time.monotonic() < deadline and not pending:
        out = c.run(["journalctl", "-u", UNIT, "--after-cursor", mark, "-o", "json", "--no-pager",
                     f"MESSAGE_ID={PENDING_ID}"]).stdout
        pending = [json.loads(line) for line in out.splitlines() if line.strip()]
        time.sleep(0.1)
    field = first(pending[0], "CONFIG_PENDING_RESTART") if pending else None
    run.check(field == f"HTTP.port={other}", f"pending-restart entry (MESSAGE_ID={PENDING_ID}) names HTTP.port={other}: {field!r}")
    answer = run.get(port, "/greeting")
    run.check(answer == "reloaded greeting", f"the old port {port} still answers: {answer!r}")
    run.check(run.get(other, "/greeting", timeout=0.5) is None, f"nothing listens on the new port {other} before a restart")
    shown = c.run(["envctl", "show", "--app-name", "hummingbird-service"])
    run.check(shown.returncode == 0 and f"(pending restart: {other} after restart)" in shown.stdout,
              f"envctl show marks HTTP.port pending: {[l for l in shown.stdout.splitlines() if l.startswith('HTTP.port')]} {shown.stderr.strip()!r}")

    # The reload metrics, served by swift-prometheus: parsed as Prometheus's text format.
    samples, reloads = run.metrics(port)
    # The watcher may apply the edit made just before systemctl reload: that reload is then
    # "unchanged".
    applied, signalled = reload_count(reloads, "result", "applied"), reload_count(reloads, "trigger", "signal")
    run.check(applied >= 2 and signalled >= 1 and reloads.get((("result", "applied"), ("trigger", "file")), 0) >= 1,
              f"environments_reloads_total counts the file edits and systemctl reload by result and trigger: {reloads}")
    run.check(samples.get(("environments_last_reload_successful", ())) == 1,
              f"environments_last_reload_successful 1: {samples.get(('environments_last_reload_successful', ()))}")
    stamp = samples.get(("environments_last_reload_success_timestamp_seconds", ()), 0)
    run.check(abs(stamp - time.time()) < 600, f"environments_last_reload_success_timestamp_seconds is now: {stamp}")
    generation = samples.get(("environments_generation", ()), 0)
    run.check(generation >= 3, f"environments_generation: {generation}")
    run.check(samples.get(("environments_watch_polling", ())) == 0, "environments_watch_polling 0 (inotify works)")
    count = samples.get(("environments_reload_duration_seconds_count", ()), 0)
    run.check(count >= 2, f"environments_reload_duration_seconds is a histogram of the reloads: count {count}")

    run.stop(UNIT, SOCKET)

    # A start whose bind fails (the port taken) never says READY=1: the start fails.
    run.check_bind_failure(port)


if __name__ == "__main__":
    example_service_e2e.main("hummingbird-service", __doc__, scenario)
