"""What the end-to-end tests of the example HTTP services share (run_hummingbird_e2e.py,
run_vapor_e2e.py): building the example, a run whose checks GET its routes and rewrite its
Environments.plist, and the whole run in a booted Debian trixie container (systemd 257), the
service's unit, envctl and the journal catalog installed as a package would.

Each example NAME has Examples/NAME, etc/NAME/Environments.plist, systemd/NAME.service, and
listens on the port its plist's `HTTP.port` gives.
"""

import argparse
import json
import os
import plistlib
import socket
import subprocess
import sys
import time
import traceback

import run_e2e as e2e
from e2e.checks import Checks
from e2e.common import Options


def build(name):
    """A static release build of Examples/NAME, in .build-SHORT-release (SHORT: NAME without
    `-service`); returns the executable's path."""
    relative = f".build-{name.removesuffix('-service')}-release"
    command = ["swift", "build", "-c", "release", "--static-swift-stdlib", "--package-path",
               os.path.join(e2e.ROOT, "Examples", name), "--scratch-path", os.path.join(e2e.ROOT, relative)]
    e2e.log("  " + " ".join(command[:5]) + f" --package-path Examples/{name} --scratch-path {relative}")
    result = subprocess.run(command, cwd=e2e.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print(result.stdout[-6000:])
        raise RuntimeError(f"building {name} failed (exit {result.returncode})")
    path = subprocess.run(command + ["--show-bin-path"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    return os.path.join(path, name)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ExampleRun(Checks):
    """The checks of one run against the example NAME in `container`."""

    def __init__(self, container, name):
        super().__init__(container, f"{name}.service")
        self.name = name
        self.unit = f"{name}.service"

    def require_serving_when_ready(self, port):
        """A unit drop-in whose ExecStartPost= (which systemd runs as soon as READY=1 arrives)
        connects to `port` once, without retrying: a start that says READY=1 before the server
        accepts connections fails."""
        connect = f"exec 3<>/dev/tcp/127.0.0.1/{port}"
        self.c.run(["mkdir", "-p", f"/etc/systemd/system/{self.unit}.d"])
        self.c.write_atomic(f"/etc/systemd/system/{self.unit}.d/60-serving-when-ready.conf",
                            f"[Service]\nExecStartPost=/bin/bash -c '{connect}'\n".encode())
        self.systemctl("daemon-reload")

    def connects(self, port, timeout=1.0):
        """Whether a TCP connection to `port` on the container's loopback is accepted, at once."""
        code = ("import socket\n"
                f"socket.create_connection(('127.0.0.1', {port}), timeout={timeout}).close()\n")
        result = subprocess.run(["nsenter", "-t", str(self.c.pid), "-n", sys.executable, "-c", code],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout + 10)
        return result.returncode == 0

    def start(self, unit_type, status_note="", port=None):
        """systemctl start: checks the unit is active/running, of `unit_type`, with the status
        text of the Release environment's first generation, and with `port`, that the port
        accepts a connection the moment systemctl start returns (READY=1 came after the bind);
        returns its properties."""
        started = time.monotonic()
        result = self.systemctl("start", self.unit)
        self.check(result.returncode == 0, f"systemctl start exit status ({result.stderr.strip()!r})")
        if port is not None:
            self.check(self.connects(port), f"port {port} accepts a connection as soon as systemctl start returned")
        props = self.show("ActiveState", "SubState", "StatusText", "MainPID", "Type")
        e2e.log(f"  started in {time.monotonic() - started:.2f} s: {props}")
        self.check((props.get("ActiveState"), props.get("SubState")) == ("active", "running"), f"active/running: {props}")
        self.check(props.get("StatusText") == "Environment Release, configuration generation 1",
                   f"StatusText{status_note}: {props.get('StatusText')!r}")
        self.check(props.get("Type") == unit_type, f"Type: {props.get('Type')!r}")
        return props

    def check_bind_failure(self, port):
        """With `port` taken by another listener (and Restart=no), systemctl start fails: the
        unit ends `failed`, its process exited 1, and it never became active (READY=1 never
        came: ActiveEnterTimestampMonotonic is the previous start's, StatusText is not the
        ready one's)."""
        holder = subprocess.Popen(
            ["nsenter", "-t", str(self.c.pid), "-n", sys.executable, "-c",
             "import socket, sys, time\n"
             "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
             f"s.bind(('127.0.0.1', {port})); s.listen(); print('bound', flush=True); time.sleep(120)\n"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        drop_in = f"/etc/systemd/system/{self.unit}.d/70-no-restart.conf"
        self.write_plist("first greeting", port)  # the scenario may have moved HTTP.port
        try:
            bound = holder.stdout.readline().strip() == "bound"
            self.check(bound, f"another listener holds port {port}")
            self.c.run(["mkdir", "-p", os.path.dirname(drop_in)])
            self.c.write_atomic(drop_in, b"[Service]\nRestart=no\n")
            self.systemctl("daemon-reload")
            self.systemctl("reset-failed", self.unit)
            before = self.show("ActiveEnterTimestampMonotonic").get("ActiveEnterTimestampMonotonic")
            result = self.systemctl("start", self.unit)
            props = self.show("ActiveState", "Result", "ExecMainCode", "ExecMainStatus", "StatusText",
                              "ActiveEnterTimestampMonotonic")
            e2e.log(f"  start with port {port} taken: exit {result.returncode}, {props}")
            self.check(result.returncode != 0, f"systemctl start fails when the port is taken ({result.stderr.strip()!r})")
            self.check((props.get("ActiveState"), props.get("Result")) == ("failed", "exit-code"),
                       f"the unit ends failed, Result=exit-code: {props}")
            self.check((props.get("ExecMainCode"), props.get("ExecMainStatus")) == ("1", "1"),
                       f"the process exited with status 1 (CLD_EXITED): {props}")
            self.check(props.get("ActiveEnterTimestampMonotonic") == before,
                       f"never active: no READY=1 ({before} before, {props.get('ActiveEnterTimestampMonotonic')} after)")
            self.check("configuration generation" not in props.get("StatusText", ""),
                       f"no STATUS= of a ready service (it travels with READY=1): {props.get('StatusText')!r}")
        finally:
            holder.kill()
            holder.wait()
            self.c.run(["rm", "-f", drop_in])
            self.systemctl("daemon-reload")
            self.systemctl("reset-failed", self.unit)

    def get(self, port, path, timeout=2.0):
        """GET on the container's loopback (its own network namespace), from the host's python."""
        code = ("import sys, urllib.request\n"
                f"r = urllib.request.urlopen('http://127.0.0.1:{port}{path}', timeout={timeout})\n"
                "sys.stdout.write(r.read().decode())\n")
        result = subprocess.run(["nsenter", "-t", str(self.c.pid), "-n", sys.executable, "-c", code],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout + 10)
        return result.stdout if result.returncode == 0 else None

    def stop(self, unit, socket):
        """systemctl stop: the unit ends inactive with Result=success, its control socket gone."""
        result = self.systemctl("stop", unit)
        props = self.show("ActiveState", "Result")
        self.check(result.returncode == 0 and props.get("ActiveState") == "inactive" and props.get("Result") == "success",
                   f"systemctl stop: {props} ({result.stderr.strip()!r})")
        self.check(self.c.run(["test", "-e", socket]).returncode != 0, "the control socket is removed on stop")

    def metrics(self, port):
        """GET /metrics, parsed: (every sample, environments_reloads_total's samples by label pairs)."""
        text = self.get(port, "/metrics")
        self.check(text is not None, "GET /metrics answers")
        samples = parse_prometheus(text or "", self)
        reloads = {labels: value for (name, labels), value in samples.items() if name == "environments_reloads_total"}
        return samples, reloads

    def wait_get(self, port, path, predicate, timeout=5.0):
        deadline = time.monotonic() + timeout
        answer = None
        while time.monotonic() < deadline:
            answer = self.get(port, path)
            if answer is not None and predicate(answer):
                return answer, True
            time.sleep(0.05)
        return answer, False

    def check_first_answers(self, port, expected_config):
        """The service's first answers once it serves: GET /greeting is the configured Greeting,
        and GET /config (JSON) is `expected_config`."""
        answer, ok = self.wait_get(port, "/greeting", lambda a: True)
        self.check(ok and answer == "first greeting", f"GET /greeting answers the configured Greeting: {answer!r}")
        config, _ = self.wait_get(port, "/config", lambda a: True)
        try:
            described = json.loads(config or "{}")
        except ValueError:
            described = {}
        self.check(described == expected_config, f"GET /config: {config!r}")

    def write_plist(self, greeting, port, log_level=None):
        """etc/NAME/Environments.plist with `Greeting`, `HTTP.port` (and `LogLevel`), written
        into the container atomically (a temporary file, then a rename)."""
        with open(os.path.join(e2e.ROOT, "etc", self.name, "Environments.plist"), "rb") as handle:
            plist = plistlib.load(handle)
        plist["Common"]["Greeting"] = greeting
        plist["Common"]["HTTP"]["port"] = port
        if log_level is not None:
            plist["Common"]["LogLevel"] = log_level
        self.c.write_atomic(f"/etc/{self.name}/Environments.plist", plistlib.dumps(plist, fmt=plistlib.FMT_XML))


def parse_prometheus(text, run):
    """Prometheus's text exposition format (version 0.0.4): {(name, sorted label pairs): value}.
    Every line is a comment (# HELP, # TYPE), blank, or a sample; anything else fails the run."""
    import re
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$')
    label = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?')
    samples, bad = {}, []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            if line.startswith("# TYPE ") and len(line.split()) != 4:
                bad.append(line)
            continue
        match = sample.match(line)
        if not match:
            bad.append(line)
            continue
        name, labels_text, value = match.groups()
        labels, rest = [], labels_text or ""
        while rest.strip():
            found = label.match(rest)
            if not found:
                bad.append(line)
                break
            labels.append((found.group(1), found.group(2)))
            rest = rest[found.end():]
        try:
            samples[(name, tuple(sorted(labels)))] = float(value)
        except ValueError:
            bad.append(line)
    run.check(not bad, f"/metrics is Prometheus text format: unparsable lines {bad[:5]}")
    run.check(bool(samples), f"/metrics has samples: {text[:200]!r}")
    return samples


def reload_count(reloads, label, value):
    """The sum of environments_reloads_total's samples that carry the label `label="value"`."""
    return sum(count for labels, count in reloads.items() if (label, value) in labels)


def main(name, description, scenario, run_class=ExampleRun):
    """Parses the arguments, builds what is not given, runs `scenario(run, port)` in a booted
    trixie container and exits 1 on any failed check."""
    unit = f"{name}.service"
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", help=f"a static release build of {name} (default: build it)")
    parser.add_argument("--envctl", help="a static release build of envctl (default: .build-release/release/envctl, else build it)")
    parser.add_argument("-v", "--verbose", action="store_true")
    arguments = parser.parse_args()
    Options.verbose = arguments.verbose
    e2e.check_prerequisites(need_swift=arguments.binary is None)
    started = time.monotonic()
    e2e.log("Building ...")
    binary = arguments.binary or build(name)
    envctl = arguments.envctl or os.path.join(e2e.ROOT, ".build-release", "release", "envctl")
    if not os.path.exists(envctl):
        envctl = os.path.join(e2e.build_binaries(), "envctl")
    lower = e2e.ensure_rootfs("trixie")
    container = e2e.Container(f"e2e-{name.removesuffix('-service')}-{os.getpid()}", lower)
    run = None
    try:
        container.prepare()
        place = container.place
        place(binary, f"/usr/local/bin/{name}", 0o755)
        place(envctl, "/usr/local/bin/envctl", 0o755)
        place(os.path.join(e2e.ROOT, "systemd", unit), f"/etc/systemd/system/{unit}", 0o644)
        place(os.path.join(e2e.ROOT, "systemd", "environments.catalog"), "/usr/lib/systemd/catalog/environments.catalog", 0o644)
        os.makedirs(os.path.join(container.root, f"etc/{name}"), exist_ok=True)
        container.boot()
        run = run_class(container, name)
        port = free_port()
        run.write_plist("first greeting", port)
        scenario(run, port)
    except Exception:
        traceback.print_exc()
        if run is None:
            run = run_class(container, name)
        run.failures.append("the scenario aborted")
    finally:
        if run and run.failures and container.pid:
            e2e.log(container.run(["journalctl", "-u", unit, "--no-pager", "-n", "40"]).stdout)
        container.shutdown()
    e2e.log("=" * 100)
    e2e.log(f"{name} under systemd 257: {run.passed} checks passed, {len(run.failures)} failed "
            f"({time.monotonic() - started:.0f} s)")
    for failure in run.failures:
        e2e.log(f"  FAILED: {failure}")
    sys.exit(1 if run.failures else 0)
