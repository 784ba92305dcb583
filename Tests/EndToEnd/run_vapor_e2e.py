#!/usr/bin/env python3
"""End-to-end test of Examples/vapor-service under a real systemd 257.

A Vapor 4 server whose settings come from Environments through the EnvironmentsVapor
integration (the configuration service runs with Vapor's lifecycle; routes read
`req.environments`), run as systemd/vapor-service.service (Type=notify, `serve --env
production`, `ExecReload=envctl reload`, hardened) in a Debian trixie container:

  start        systemctl start returns active; StatusText names Release (Vapor's production
               mapped), generation 1; READY=1 only once Vapor's port accepts (ExecStartPost=
               connects once, and so does the test right after systemctl start returns)
  request      GET /greeting on loopback answers the configured Greeting; /config names both
               environments (ours: Release, Vapor's: production)
  file edit    an edit (temporary file + rename) is answered without a restart, same MainPID
  reload       an edit + systemctl reload: when reload returns, the route answers the new value
  SIGHUP       trapped when Vapor boots: a reload (counted with trigger "signal"), the process lives on
  rejected     a bad edit (LogLevel "loud") + systemctl reload: reload fails with the key in
               its reason, the service stays up (same MainPID) and answers the last good values
  metrics      GET /metrics is Prometheus text; the reload metrics count applied and rejected
               reloads, and the last reload failed
  recovered    the file fixed + systemctl reload: applied
  stop         systemctl stop: inactive, Result=success, the control socket removed
  bind fails   the port taken by another listener (Restart=no): systemctl start fails, the unit
               ends failed with exit status 1, and it never became active (no READY=1)

Reuses the e2e package's containers and root file systems. Python 3 standard library only.

  sudo python3 Tests/EndToEnd/run_vapor_e2e.py [--binary PATH] [--envctl PATH] [-v]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example_service_e2e  # noqa: E402
from example_service_e2e import reload_count  # noqa: E402

UNIT = "vapor-service.service"
SOCKET = "/run/vapor-service/configuration.varlink"


def scenario(run, port):
    c = run.c
    mark = c.run(["journalctl", "--show-cursor", "-n", "0", "--no-pager"]).stdout.strip().split("cursor: ")[-1]
    # READY=1 once Vapor's server accepts connections: the port accepts one at once when
    # systemctl start returns, and ExecStartPost= (run on READY=1) connects without retrying.
    run.require_serving_when_ready(port)
    main_pid = run.start("notify", " (Vapor's production maps to Release)", port=port).get("MainPID")

    # READY=1 went out once Vapor served: its first answers come from the loaded configuration.
    run.check_first_answers(port, {"environment": "Release", "vaporEnvironment": "production", "generation": 1,
                                   "greeting": "first greeting", "port": port})

    # A file edit alone: the next answers have the new value, no restart.
    run.write_plist("edited greeting", port)
    answer, ok = run.wait_get(port, "/greeting", lambda a: a == "edited greeting")
    run.check(ok, f"after a file edit, GET /greeting answers the new value without a restart: {answer!r}")

    # An edit and systemctl reload (ExecReload=envctl reload): when reload returns, it is served.
    run.write_plist("reloaded greeting", port)
    result = run.systemctl("reload", UNIT)
    answer = run.get(port, "/greeting")
    run.check(result.returncode == 0, f"systemctl reload exit status ({result.stderr.strip()!r})")
    run.check(answer == "reloaded greeting", f"right after systemctl reload returned, GET /greeting: {answer!r}")

    # SIGHUP (what Type=notify-reload units send, and kill -HUP): trapped when Vapor boots, it
    # reloads and never ends the process (counted by trigger in the metrics below).
    result = run.systemctl("kill", "--signal=SIGHUP", "--kill-whom=main", UNIT)
    run.check(result.returncode == 0, f"systemctl kill --signal=SIGHUP ({result.stderr.strip()!r})")
    _, ok = run.wait_get(port, "/metrics", lambda text: 'trigger="signal"' in text)
    run.check(ok, "SIGHUP reloads: environments_reloads_total has a trigger=\"signal\" sample")
    answer = run.get(port, "/greeting")
    run.check(answer == "reloaded greeting", f"after SIGHUP, GET /greeting still answers: {answer!r}")

    # A rejected edit: LogLevel is declared one of swift-log's levels. systemctl reload fails
    # and names it; the service runs on with its last good values (the new greeting too is
    # not served).
    run.write_plist("never served", port, log_level="loud")
    result = run.systemctl("reload", UNIT)
    run.check(result.returncode != 0, f"systemctl reload of a rejected edit fails: exit {result.returncode}")
    reason = c.run(["journalctl", "-u", UNIT, "--after-cursor", mark, "--no-pager", "-o", "cat"]).stdout
    run.check("'LogLevel' is not an allowed value ('loud')" in (result.stderr + result.stdout + reason),
              "systemctl reload's output or the journal names the rejected key and value: "
              f"{result.stderr.strip()!r} {[l for l in reason.splitlines() if 'LogLevel' in l][:2]}")
    answer = run.get(port, "/greeting")
    run.check(answer == "reloaded greeting", f"after the rejected edit, GET /greeting keeps the last good value: {answer!r}")
    props = run.show("ActiveState", "MainPID")
    run.check(props.get("ActiveState") == "active" and props.get("MainPID") == main_pid,
              f"the service is still up, same MainPID after the edits: {props} (was {main_pid})")

    # The reload metrics, served by swift-prometheus beside Vapor's own.
    samples, reloads = run.metrics(port)
    applied, rejected = reload_count(reloads, "result", "applied"), reload_count(reloads, "result", "rejected")
    signalled = reload_count(reloads, "trigger", "signal")
    run.check(applied >= 2 and rejected >= 1 and signalled >= 1,
              f"environments_reloads_total counts the applied, the rejected and the SIGHUP reloads: {reloads}")
    run.check(samples.get(("environments_last_reload_successful", ())) == 0,
              f"environments_last_reload_successful 0 after the rejection: "
              f"{samples.get(('environments_last_reload_successful', ()))}")
    run.check(any(name == "http_requests_total" for name, _ in samples),
              "Vapor's own metrics (http_requests_total) are served too")

    # Fixed: applied again.
    run.write_plist("recovered greeting", port)
    result = run.systemctl("reload", UNIT)
    answer = run.get(port, "/greeting")
    run.check(result.returncode == 0 and answer == "recovered greeting",
              f"the fixed file reloads: exit {result.returncode}, GET /greeting {answer!r}")

    run.stop(UNIT, SOCKET)

    # A start whose bind fails (the port taken) never says READY=1: the start fails.
    run.check_bind_failure(port)


if __name__ == "__main__":
    example_service_e2e.main("vapor-service", __doc__, scenario)
