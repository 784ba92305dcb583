#!/usr/bin/env python3
"""End-to-end test of Examples/vapor-service under a real systemd 257.

A Vapor 4 server whose settings come from Environments through the EnvironmentsVapor
integration (the configuration service runs with Vapor's lifecycle; routes read
`req.environments`), run as systemd/vapor-service.service (Type=notify, `serve --env
production`, `ExecReload=envctl reload`, hardened) in a Debian trixie container:

  start        systemctl start returns active; StatusText names Release (Vapor's production
               mapped), generation 1
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

Reuses the e2e package's containers and root file systems. Python 3 standard library only.

  sudo python3 Tests/EndToEnd/run_vapor_e2e.py [--binary PATH] [--envctl PATH] [-v]
"""

import argparse
import json
import os
import plistlib
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as e2e  # noqa: E402
from e2e.checks import Checks  # noqa: E402
from e2e.common import Options  # noqa: E402
from run_hummingbird_e2e import free_port, parse_prometheus  # noqa: E402

UNIT = "vapor-service.service"
CONFIG_DIR = "/etc/vapor-service"
MAIN_FILE = CONFIG_DIR + "/Environments.plist"
SOCKET = "/run/vapor-service/configuration.varlink"


def build():
    scratch = os.path.join(e2e.ROOT, ".build-vapor-release")
    command = ["swift", "build", "-c", "release", "--static-swift-stdlib", "--package-path",
               os.path.join(e2e.ROOT, "Examples", "vapor-service"), "--scratch-path", scratch]
    e2e.log("  " + " ".join(command[:5]) + " --package-path Examples/vapor-service --scratch-path .build-vapor-release")
    result = subprocess.run(command, cwd=e2e.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print(result.stdout[-6000:])
        raise RuntimeError(f"building vapor-service failed (exit {result.returncode})")
    path = subprocess.run(command + ["--show-bin-path"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    return os.path.join(path, "vapor-service")


class Run(Checks):
    def __init__(self, container):
        super().__init__(container, UNIT)

    def get(self, port, path, timeout=2.0):
        """GET on the container's loopback (its own network namespace), from the host's python."""
        code = ("import sys, urllib.request\n"
                f"r = urllib.request.urlopen('http://127.0.0.1:{port}{path}', timeout={timeout})\n"
                "sys.stdout.write(r.read().decode())\n")
        result = subprocess.run(["nsenter", "-t", str(self.c.pid), "-n", sys.executable, "-c", code],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout + 10)
        return result.stdout if result.returncode == 0 else None

    def wait_get(self, port, path, predicate, timeout=5.0):
        deadline = time.monotonic() + timeout
        answer = None
        while time.monotonic() < deadline:
            answer = self.get(port, path)
            if answer is not None and predicate(answer):
                return answer, True
            time.sleep(0.05)
        return answer, False

    def write_plist(self, greeting, port, log_level="info"):
        with open(os.path.join(e2e.ROOT, "etc", "vapor-service", "Environments.plist"), "rb") as handle:
            plist = plistlib.load(handle)
        plist["Common"]["Greeting"] = greeting
        plist["Common"]["HTTP"]["port"] = port
        plist["Common"]["LogLevel"] = log_level
        self.c.write_atomic(MAIN_FILE, plistlib.dumps(plist, fmt=plistlib.FMT_XML))


def scenario(run, port):
    c = run.c
    mark = c.run(["journalctl", "--show-cursor", "-n", "0", "--no-pager"]).stdout.strip().split("cursor: ")[-1]
    started = time.monotonic()
    result = run.systemctl("start", UNIT)
    run.check(result.returncode == 0, f"systemctl start exit status ({result.stderr.strip()!r})")
    props = run.show("ActiveState", "SubState", "StatusText", "MainPID", "Type")
    e2e.log(f"  started in {time.monotonic() - started:.2f} s: {props}")
    run.check((props.get("ActiveState"), props.get("SubState")) == ("active", "running"), f"active/running: {props}")
    run.check(props.get("StatusText") == "Environment Release, configuration generation 1",
              f"StatusText (Vapor's production maps to Release): {props.get('StatusText')!r}")
    run.check(props.get("Type") == "notify", f"Type: {props.get('Type')!r}")
    main_pid = props.get("MainPID")

    # READY=1 goes out when the configuration is loaded and watched; Vapor binds right after.
    answer, ok = run.wait_get(port, "/greeting", lambda a: True)
    run.check(ok and answer == "first greeting", f"GET /greeting answers the configured Greeting: {answer!r}")
    config, _ = run.wait_get(port, "/config", lambda a: True)
    try:
        described = json.loads(config or "{}")
    except ValueError:
        described = {}
    run.check(described == {"environment": "Release", "vaporEnvironment": "production", "generation": 1,
                            "greeting": "first greeting", "port": port}, f"GET /config: {config!r}")

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
    text = run.get(port, "/metrics")
    run.check(text is not None, "GET /metrics answers")
    samples = parse_prometheus(text or "", run)
    reloads = {labels: value for (name, labels), value in samples.items() if name == "environments_reloads_total"}
    applied = sum(v for labels, v in reloads.items() if ("result", "applied") in labels)
    rejected = sum(v for labels, v in reloads.items() if ("result", "rejected") in labels)
    signalled = sum(v for labels, v in reloads.items() if ("trigger", "signal") in labels)
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

    result = run.systemctl("stop", UNIT)
    props = run.show("ActiveState", "Result")
    run.check(result.returncode == 0 and props.get("ActiveState") == "inactive" and props.get("Result") == "success",
              f"systemctl stop: {props} ({result.stderr.strip()!r})")
    run.check(c.run(["test", "-e", SOCKET]).returncode != 0, "the control socket is removed on stop")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", help="a static release build of vapor-service (default: build it)")
    parser.add_argument("--envctl", help="a static release build of envctl (default: .build-release/release/envctl, else build it)")
    parser.add_argument("-v", "--verbose", action="store_true")
    arguments = parser.parse_args()
    Options.verbose = arguments.verbose
    e2e.check_prerequisites(need_swift=arguments.binary is None)
    started = time.monotonic()
    e2e.log("Building ...")
    binary = arguments.binary or build()
    envctl = arguments.envctl or os.path.join(e2e.ROOT, ".build-release", "release", "envctl")
    if not os.path.exists(envctl):
        envctl = os.path.join(e2e.build_binaries(), "envctl")
    lower = e2e.ensure_rootfs("trixie")
    container = e2e.Container(f"e2e-vapor-{os.getpid()}", lower)
    run = None
    try:
        container.prepare()
        place = container.place
        place(binary, "/usr/local/bin/vapor-service", 0o755)
        place(envctl, "/usr/local/bin/envctl", 0o755)
        place(os.path.join(e2e.ROOT, "systemd", "vapor-service.service"), f"/etc/systemd/system/{UNIT}", 0o644)
        place(os.path.join(e2e.ROOT, "systemd", "environments.catalog"), "/usr/lib/systemd/catalog/environments.catalog", 0o644)
        os.makedirs(os.path.join(container.root, CONFIG_DIR.lstrip("/")), exist_ok=True)
        container.boot()
        run = Run(container)
        port = free_port()
        run.write_plist("first greeting", port)
        scenario(run, port)
    except Exception:
        traceback.print_exc()
        if run is None:
            run = Run(container)
        run.failures.append("the scenario aborted")
    finally:
        if run and run.failures and container.pid:
            e2e.log(container.run(["journalctl", "-u", UNIT, "--no-pager", "-n", "40"]).stdout)
        container.shutdown()
    e2e.log("=" * 100)
    e2e.log(f"vapor-service under systemd 257: {run.passed} checks passed, {len(run.failures)} failed "
            f"({time.monotonic() - started:.0f} s)")
    for failure in run.failures:
        e2e.log(f"  FAILED: {failure}")
    sys.exit(1 if run.failures else 0)


if __name__ == "__main__":
    main()
