#!/usr/bin/env python3
"""Every command the READMEs and the DocC articles tell a reader to run, run in CI.

    scripts/documented-commands.py [--list] [--only PATTERN]

Reads each ```sh block of README.md, */README.md, Examples/*/README.md, Tests/EndToEnd/README.md,
.ci/README.md and Sources/*/*.docc/*.md. Each command in them (a line, with its `\\` continuation lines, without its
`# comment`) must match one entry of COMMANDS below, which says how CI runs it:

  run    this script runs the documented line itself, as written, with the debug build's
         envctl, example-daemon, example-fleet-daemon and envctl-fleet first on PATH (envctl
         runs envctl-fleet for `envctl publish` and `envctl fleet` from beside itself)
         (a copy of etc/ as the working directory, so that `set` changes a copy), or its short
         form (a benchmark's smoke run, from the release build, whose folder holds envctl,
         envctl-fleet and example-fleet-daemon side by side), and checks its exit status;
  ci     another step of CI runs it (scripts/test.sh's end-to-end tests run the systemd,
         journalctl, varlinkctl, apt and `envctl --app-name` commands inside booted systemd 252
         and 257 containers, as the articles show them);

A command no entry covers fails the script: a new command in a document needs a way to run in
CI. Examples/minimal-daemon (its smoke test) and the GettingStarted article are checked by their
own steps of scripts/test.sh, not listed here: scripts/walk-getting-started.py runs the guide's
commands from "Your own daemon" on in order, as written (the clone, the renamed template,
`swift run`, the release builds, then systemd 252 in a container), and checks every outcome its
comments promise; its table, like COMMANDS, fails on a command it does not cover.

--list prints each command, its document and how CI covers it. Needs the debug builds (with
tests, every trait) of this package, and the release build
(scripts/build-release.sh) made; CI and scripts/test.sh make them.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from lib.scratch import scratch_path
from lib.shell import run_in_session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLOCK = re.compile(r"^```(?:sh|bash|shell|console)[^\n]*\n(.*?)^```", re.S | re.M)
# Left to their own check (scripts/test.sh builds and runs the minimal daemon of the walkthrough).
EXCLUDED = {"Sources/Environments/Environments.docc/GettingStarted.md"}
EXCLUDED_PREFIXES = ("Examples/minimal-daemon/",)
FLEET_QUICKSTART = "Sources/EnvironmentsEtcd/EnvironmentsEtcd.docc/FleetQuickStart.md"


def documents():
    files = ["README.md", "Tests/EndToEnd/README.md", ".ci/README.md"]
    files += sorted(glob.glob("*/README.md", root_dir=ROOT)) + sorted(glob.glob("Examples/*/README.md", root_dir=ROOT))
    files += sorted(glob.glob("Sources/*/*.docc/*.md", root_dir=ROOT))
    seen = []
    for name in files:
        if name in seen or name in EXCLUDED or name.startswith(EXCLUDED_PREFIXES):
            continue
        if os.path.exists(os.path.join(ROOT, name)):
            seen.append(name)
    return seen


def commands(name):
    """The commands of one document: (line number, command)."""
    text = open(os.path.join(ROOT, name), encoding="utf-8").read()
    for match in BLOCK.finditer(text):
        first = text.count("\n", 0, match.start()) + 2
        lines = match.group(1).split("\n")
        index = 0
        while index < len(lines):
            start = index
            # A comment after two spaces or more ends a line; quoted text keeps its #.
            uncomment = lambda text: re.sub(r"\s{2,}#.*$", "", text)  # noqa: E731
            line = uncomment(lines[index])
            # Continued by a backslash, or by a quoted string that spans lines.
            while (line.rstrip().endswith("\\") or line.count("'") % 2) and index + 1 < len(lines):
                index += 1
                line = line.rstrip().removesuffix("\\").rstrip() + " " + uncomment(lines[index]).strip()
            index += 1
            command = line.strip()
            if command and not command.startswith("#"):
                yield first + start, command


# (document pattern, command pattern, how): how is ("run", runner), or ("ci", where).
E2E = "scripts/test.sh: end-to-end tests under systemd 252 and 257 (Tests/EndToEnd)"
COMMANDS = [
    # FleetQuickStart: the walkthrough, on an etcd of its own (free ports for 2379 and 2380).
    (r"FleetQuickStart\.md", r"^sudo apt-get install etcd-server etcd-client$", ("ci", "scripts/install-packages.sh")),
    (r"FleetQuickStart\.md", r".", ("run", "fleet_quickstart")),
    # README.md
    ("README.md", r"^apt-get update && apt-get install -y libsystemd-dev pkg-config && swift run example-daemon$",
     ("run", "readme_daemon")),
    ("README.md", r"^\./scripts/test\.sh$", ("ci", ".ci/run: scripts/test.sh")),
    (".ci/README.md", r"^\.ci/run$", ("ci", "this run")),
    (".ci/README.md", r"^scripts/check-architecture\.py$", ("ci", ".ci/run: scripts/check-architecture.py")),
    (".ci/README.md", r"^scripts/expectation-less-tests\.py$", ("ci", ".ci/run: scripts/expectation-less-tests.py")),
    # api/README.md: the public API's digest, checked after scripts/test.sh (its debug build).
    ("api/README.md", r"^(swift build --enable-all-traits|scripts/api-digest\.py( --scratch-path DIR)?)$",
     ("ci", ".ci/run: scripts/api-digest.py --scratch-path (the debug build scripts/test.sh leaves)")),
    ("api/README.md", r"^scripts/api-digest\.py --write$",
     ("ci", ".ci/run: scripts/api-digest.py (--write writes what the check compares; it fails when they differ)")),
    # Fuzz/README.md
    ("Fuzz/README.md", r"^(FUZZ_JOBS=2 )?Fuzz/run\.sh \d+( \w+)*$",
     ("ci", ".ci/run lane 2: FUZZ_SEED=1 FUZZ_JOBS=2 Fuzz/run.sh 30 (every target)")),
    # Examples/hummingbird-service/README.md
    ("Examples/hummingbird-service/README.md", r"^(swift run --package-path Examples/hummingbird-service hummingbird-service|curl http://127\.0\.0\.1:8080/)",
     ("ci", "scripts/test.sh: end-to-end: Hummingbird example (run_hummingbird_e2e.py: the release build on etc/hummingbird-service, curl)")),
    # Examples/vapor-service/README.md and the Vapor article: under systemd in run_vapor_e2e.py.
    ("Examples/vapor-service/README.md",
     r"^(CONFIGURATION_DIRECTORY=etc/vapor-service swift run --package-path Examples/vapor-service vapor-service serve|curl http://127\.0\.0\.1:8080/)",
     ("ci", "scripts/test.sh: end-to-end: Vapor example (run_vapor_e2e.py: the release build on etc/vapor-service, HTTP GETs)")),
    (r"^(Examples/vapor-service/README\.md|Sources/EnvironmentsVapor/.*\.docc/)", r"^(sudo )?(systemctl|journalctl) ",
     ("ci", "scripts/test.sh: end-to-end: Vapor example (run_vapor_e2e.py: systemctl start, reload applied and rejected, "
            "the journal, stop)")),
    # Tests/EndToEnd/README.md
    ("Tests/EndToEnd/README.md", r"^sudo python3 Tests/EndToEnd/run_(deb_)?e2e\.py",
     ("ci", "scripts/test.sh: run_e2e.py --binaries, run_deb_e2e.py --deb (every configuration and suite)")),
    ("Tests/EndToEnd/README.md", r"^(sudo )?scripts/walk-getting-started\.py( --list)?$",
     ("ci", "scripts/test.sh: walk of Getting started (scripts/walk-getting-started.py)")),
    # The articles: what runs without a running daemon, as written, in a copy of etc/.
    (r"\.docc/", r"^envctl (show|get|check|diff)\s+.*--config-dir etc/example-daemon", ("run", "files")),
    # The articles: a daemon of the copy of etc/, run here (RUNTIME_DIRECTORY, CONFIGURATION_DIRECTORY
    # and CREDENTIALS_DIRECTORY as systemd would set them), then envctl asks it, as written.
    (r"\.docc/", r"^envctl (schema|explain|show|history|set|unset|edit) .*--app-name example-daemon(?! --instance)", ("run", "daemon")),
    (r"\.docc/", r"^envctl diff\s+--(running|generation \d+) --app-name example-daemon$", ("run", "daemon")),
    (r"\.docc/", r'^envctl reload --pid "\$MAINPID"$', ("run", "daemon")),
    (r"\.docc/", r"^envctl set\s+Database\.Port 6432 --type integer --environment Staging --drop-in 60-db$", ("run", "daemon")),
    (r"\.docc/", r"^envctl check (--strict )?--schema schema\.json --config-dir \./etc$", ("run", "daemon")),
    (r"DeclaringYourSettings\.md", r"^example-daemon --print-schema > schema\.json$", ("run", "daemon")),
    (r"\.docc/", r"^envctl migrate --app-name example-daemon --dry-run$", ("run", "daemon")),
    (r"\.docc/", r"^envctl check --config-dir /etc/example-daemon$", ("ci", E2E)),
    (r"\.docc/", r"^envctl show\s+--app-name example-daemon --instance eu-west", ("ci", E2E + ", scenario 12")),
    (r"\.docc/", r"^envctl (get|set) 'Upstreams\.\"api\.example\.com\"\.Port'",
     ("ci", "swift test: EnvctlLiteralKeyTests (the same key path, get and set, on such a file)")),
    (r"\.docc/", r"^(envctl (publish|show) --etcd-endpoints|example-fleet-daemon --etcd-endpoints)",
     ("ci", E2E + ", scenario 14 (etcd in the container), and the fleet's swift test: PublishTests")),
    (r"\.docc/", r"^sudo envctl credential (set|list) ",
     ("ci", E2E + ", scenario 15 (the containers' systemd-creds), and swift test: EnvctlCredentialTests")),
    (r"\.docc/", r"^varlinkctl ", ("ci", E2E + ", scenarios 4, 6 and 10 (systemd 257's varlinkctl)")),
    (r"\.docc/", r"^envctl show --app-name example-daemon \| head -4$", ("run", "daemon")),
    (r"\.docc/", r"^(sudo )?(systemctl|journalctl) ", ("ci", E2E)),
    (r"\.docc/", r"^(sudo )?(install|rm|env CREDENTIALS_DIRECTORY=/run/check-credentials) ",
     ("ci", E2E + " (the containers are installed file by file as InstallingByHand does; run_deb_e2e.py installs the package)")),
    (r"\.docc/", r"^swift build -c release (--static-swift-stdlib )?--product (example-daemon|envctl)$",
     ("ci", ".ci/run: scripts/build-release.sh (the same products, statically linked)")),
    (r"\.docc/", r'^bin="\$\(swift build -c release --show-bin-path\)"$', ("ci", ".ci/run: scripts/build-release.sh --show-bin-path")),
    (r"\.docc/", r"^(sudo )?scripts/install-docs\.sh", ("ci", "scripts/test.sh: scripts/package-deb.sh runs it (DESTDIR)")),
    (r"\.docc/", r"^scripts/package-deb\.sh", ("ci", "scripts/test.sh: Debian package (scripts/package-deb.sh --bin-dir)")),
    (r"\.docc/", r"^sudo apt-get install \./\.build-deb/", ("ci", "scripts/test.sh: end-to-end: Debian package (257, 252)")),
    # Benchmarks/README.md: short forms, from the release build.
    ("Benchmarks/README.md", r"^swift run -c release --package-path Benchmarks environment-benchmarks( --json)?$",
     ("run", "benchmarks")),
    ("Benchmarks/README.md", r"^swift run -c release --package-path Benchmarks fleet-benchmark", ("run", "fleet")),
    ("Benchmarks/README.md", r"^Benchmarks/adoption-cost\.sh",
     ("ci", ".ci/run: ADOPTION_COST_MAX_PACKAGES=7 Benchmarks/adoption-cost.sh --only resolve (the run part takes minutes "
            "of building; its figures are in the README)")),
    ("Benchmarks/README.md", r"^(B=\$\(swift build|swift build) -c release --static-swift-stdlib --package-path Benchmarks --scratch-path SCRATCH",
     ("ci", ".ci/run: scripts/build-release.sh (the same graph)")),
    # The full run (10,000 hosts, about 8 minutes) is matched, not run: the runner below runs its
    # short form.
    ("Benchmarks/README.md", r"^\$B/fleet-benchmark --hosts \d+ --services \d+ --changes \d+ --idle-seconds \d+ --proxies \d+"
     r"( --request-timeout \d+ --progress-notify-interval \d+)?$",
     ("run", "fleet")),
    ("Benchmarks/README.md", r"^swift test --traits Fleet --filter stalledMember",
     ("ci", "scripts/test.sh: swift test (the fleet, on etcd): FleetLiveTests")),
    ("Benchmarks/README.md", r"^Benchmarks/(plist-parsers|json-encoders)\.sh( \[RUNS\])?$", ("run", "scripts")),
    ("Benchmarks/README.md", r"^Benchmarks/fleet-status-history\.py( \[HOSTS \[ROUNDS\]\])?$", ("run", "scripts")),
    ("Benchmarks/README.md", r"^Benchmarks/count-instructions\.sh", ("run", "instructions")),
    ("Benchmarks/README.md", r"^Benchmarks/fleet-foreign-keys\.sh", ("run", "foreign_keys")),
    ("Benchmarks/README.md", r"^Benchmarks/fleet-grpc-proxy\.sh", ("run", "grpc_proxy")),
    ("Benchmarks/README.md", r"^perf record ", ("run", "perf")),
]


def free_ports(count):
    import socket
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def coverage(name, command):
    for document, pattern, how in COMMANDS:
        if re.search(document, name) and re.search(pattern, command):
            return how
    return None


class Runner:
    """Runs the commands, each with a time limit; a failure is reported and the rest go on."""

    def __init__(self, debug_bin, etcd_bin, release_bin):
        self.debug_bin, self.release_bin = debug_bin, release_bin
        self.failures = []
        self.local = threading.local()
        self.work = tempfile.mkdtemp(prefix="documented-commands-")
        # envctl, example-daemon and the fleet's programs of this package's debug build (every
        # trait) first: envctl finds envctl-fleet beside it.
        self.env = dict(os.environ, PATH=f"{debug_bin}:{etcd_bin}:{os.environ['PATH']}")
        for key in ("CONFIGURATION_DIRECTORY", "RUNTIME_DIRECTORY", "CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET",
                    "JOURNAL_STREAM", "INVOCATION_ID", "WATCHDOG_USEC", "WATCHDOG_PID"):
            self.env.pop(key, None)

    def say(self, text):
        """Prints, or keeps for later in a runner that runs beside another."""
        lines = getattr(self.local, "lines", None)
        if lines is None:
            print(text, flush=True)
        else:
            lines.append(text)

    def run(self, command, cwd, statuses=(0,), env=None, timeout=300, what=None):
        started = time.monotonic()
        status, stdout = run_in_session(command, cwd, env or self.env, timeout)
        result = subprocess.CompletedProcess(["bash", "-c", command], status, stdout)
        took = time.monotonic() - started
        ok = result.returncode in statuses
        self.say(f"  {'ok  ' if ok else 'FAIL'} {took:5.1f} s  {what or command}")
        if not ok:
            self.say("\n".join("       | " + line for line in result.stdout.rstrip().splitlines()[-25:]))
            self.failures.append(f"{what or command}: exit {result.returncode}")
        return result

    def start_daemon(self, arguments, env, log, cwd=None):
        process = subprocess.Popen(["bash", "-c", f"exec {arguments}"], cwd=cwd or self.work, env=env,
                                   stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            if "Configuration loaded" in open(log, errors="replace").read():
                return process
            time.sleep(0.1)
        self.failures.append(f"{arguments}: never logged 'Configuration loaded'")
        self.say(f"  FAIL {arguments}: never logged 'Configuration loaded':\n{open(log, errors='replace').read()[-2000:]}")
        self.stop(process, arguments)
        return None

    def stop(self, process, what):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.returncode != 0:
            self.failures.append(f"{what}: exit {process.returncode} after SIGTERM")
            self.say(f"  FAIL {what}: exit {process.returncode} after SIGTERM")

    # -- the runners ----------------------------------------------------------------------

    def readme_daemon(self, commands):
        """README: the example daemon on its built-in configuration; SIGHUP reloads it,
        SIGTERM stops it (the packages are scripts/install-packages.sh's)."""
        env = dict(self.env, RUNTIME_DIRECTORY=os.path.join(self.work, "readme-run"))
        os.makedirs(env["RUNTIME_DIRECTORY"])
        log = os.path.join(self.work, "readme-daemon.log")
        started = time.monotonic()
        process = self.start_daemon(f"swift run --skip-build --scratch-path {scratch_path('debug')} example-daemon", env, log,
                                    cwd=ROOT)
        if process is None:
            return
        before = len(open(log, errors="replace").read())
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while "reload" not in open(log, errors="replace").read()[before:] and time.monotonic() < deadline:
            time.sleep(0.1)
        if "reload" not in open(log, errors="replace").read()[before:]:
            self.failures.append("swift run example-daemon: nothing logged about a reload after SIGHUP")
            self.say("  FAIL swift run example-daemon: nothing logged about a reload after SIGHUP")
        self.stop(process, "swift run example-daemon")
        self.say(f"  ok   {time.monotonic() - started:5.1f} s  swift run example-daemon (built-in configuration; SIGHUP, SIGTERM)")

    def files(self, commands):
        """Commands on the files alone, in a copy of etc/ (diff exits 1 when environments differ)."""
        shutil.copytree(os.path.join(ROOT, "etc"), os.path.join(self.work, "files", "etc"))
        if any("schema.json" in command for command in commands):
            self.run("example-daemon --print-schema > schema.json", os.path.join(self.work, "files"),
                     what="(example-daemon --print-schema > schema.json, for --schema)")
        for command in commands:
            self.run(command, os.path.join(self.work, "files"), statuses=(0, 1) if command.startswith("envctl diff") else (0,))

    def daemon(self, commands):
        """The example daemon on a copy of etc/example-daemon, as its unit runs it; then envctl
        asks it, in the order the articles use (reloads before `diff --generation N`)."""
        root = os.path.join(self.work, "daemon")
        config = os.path.join(root, "etc")  # `--config-dir ./etc` of DeclaringYourSettings
        shutil.copytree(os.path.join(ROOT, "etc", "example-daemon"), config)
        env = dict(self.env, RUNTIME_DIRECTORY=os.path.join(root, "run"), CONFIGURATION_DIRECTORY=config,
                   CREDENTIALS_DIRECTORY=os.path.join(ROOT, "etc", "example-credentials"), EDITOR="true")
        os.makedirs(env["RUNTIME_DIRECTORY"])
        # `envctl --app-name example-daemon` asks /run/example-daemon/ first: a socket left there
        # by a daemon that was killed (nothing listens; a test's, a crashed run's) would answer
        # for this one. Such a stale socket is removed, and said so.
        stale = "/run/example-daemon/configuration.varlink"
        if os.path.exists(stale):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(stale)
            except ConnectionRefusedError:
                print(f"  note: removed {stale}, which nothing listens on (a killed daemon's)")
                os.remove(stale)
            except OSError:
                pass
            finally:
                probe.close()
        log = os.path.join(root, "daemon.log")
        process = self.start_daemon(f"{self.debug_bin}/example-daemon", env, log)
        if process is None:
            return
        env["MAINPID"] = str(process.pid)
        order = sorted(commands, key=lambda c: (not c.startswith("envctl reload"), "schema" not in c.split()[1],
                                                "--schema" in c, c.startswith("envctl diff --generation")))
        # Enough generations for `diff --generation N`.
        wanted = max([int(m.group(1)) for c in commands for m in [re.search(r"--generation (\d+)", c)] if m] or [1])
        for _ in range(wanted):
            self.run('envctl reload --pid "$MAINPID"', root, env=env, what="(a reload, for diff --generation)")
        for command in order:
            self.run(command, root, env=env, statuses=(0, 1) if command.startswith("envctl diff") else (0,))
        self.stop(process, "example-daemon")

    def fleet_quickstart(self, commands):
        """FleetQuickStart, step by step, with its Environments.plist, on an etcd of its own:
        its client and peer ports replace 2379 and 2380; the fleet daemon runs in the background
        and `$(pgrep -f example-fleet-daemon)` is its pid; its status TTL is 5 s, and the staged
        publish settles for that."""
        root = os.path.join(self.work, "fleet-quickstart")
        os.makedirs(root)
        text = open(os.path.join(ROOT, FLEET_QUICKSTART)).read()
        plist = re.search(r"```xml\n(.*?)```", text, re.S).group(1)
        open(os.path.join(root, "Environments.plist"), "w").write(plist)
        ports = free_ports(2)
        etcd = subprocess.Popen(
            ["etcd", "--data-dir", os.path.join(root, "etcd"), "--listen-client-urls", f"http://127.0.0.1:{ports[0]}",
             "--advertise-client-urls", f"http://127.0.0.1:{ports[0]}", "--listen-peer-urls", f"http://127.0.0.1:{ports[1]}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{ports[1]}",
             "--initial-cluster", f"default=http://127.0.0.1:{ports[1]}"],
            stdout=open(os.path.join(root, "etcd.log"), "w"), stderr=subprocess.STDOUT, start_new_session=True)
        daemon = None
        try:
            for command in commands:
                command = command.replace(":2379", f":{ports[0]}").replace(":2380", f":{ports[1]}")
                # The staged publish settles for the daemon's status TTL, 5 s here (below).
                command = command.replace("--settle 30s", "--settle 1s")
                if command.startswith("ETCDCTL_API=3 etcdctl"):
                    deadline = time.monotonic() + 30
                    while subprocess.run(["bash", "-c", command], capture_output=True).returncode != 0 \
                            and time.monotonic() < deadline:
                        time.sleep(0.2)
                    self.run(command, root)
                elif command.startswith("example-fleet-daemon"):
                    os.makedirs(os.path.join(root, "run"), exist_ok=True)
                    daemon = self.start_daemon(command, dict(self.env, RUNTIME_DIRECTORY=os.path.join(root, "run"),
                                                             ENVIRONMENTS_ETCD_STATUS_TTL="5"),
                                               os.path.join(root, "daemon.log"), cwd=root)
                    if daemon is None:
                        return
                elif command.startswith("envctl fleet status"):
                    # The daemon writes its status key just after it starts: wait for it (15 s).
                    deadline = time.monotonic() + 15
                    while '"host"' not in subprocess.run(["bash", "-c", command + " --json"], capture_output=True,
                                                          text=True, cwd=root, env=self.env).stdout \
                            and time.monotonic() < deadline:
                        time.sleep(0.2)
                    self.run(command, root)
                elif "pgrep -f example-fleet-daemon" in command:
                    self.run(command.replace('"$(pgrep -f example-fleet-daemon)"', str(daemon.pid)), root, what=command)
                else:
                    self.run(command, root)
        finally:
            if daemon is not None:
                self.stop(daemon, "example-fleet-daemon")
            etcd.terminate()
            etcd.wait()

    def benchmarks(self, commands):
        """Every part (the soak apart, as without --only), short: as a table, then as JSON."""
        short = "--changes 3 --default-poll-changes 1 --reloads 20 --hostile-rounds 1 --hostile-chain 10000"
        b = self.release_bin
        self.run(f"{b}/environment-benchmarks --json {short} > {self.work}/benchmarks.json && "
                 f"python3 -c 'import json,sys; json.load(open(sys.argv[1]))' {self.work}/benchmarks.json", ROOT,
                 what=f"environment-benchmarks --json (all parts) {short}")
        # The soak (reloads while four threads check that what they read is one generation):
        # exits 1 on any inconsistent read or failed reload. The table, with it.
        self.run(f"{b}/environment-benchmarks --only soak --soak-minutes 0.3 > /dev/null", ROOT,
                 what="environment-benchmarks --only soak --soak-minutes 0.3 (the table)")

    def fleet(self, commands):
        """Fleet mode against local 3-member etcd clusters and a grpc-proxy it starts and kills;
        exits 1 if a change never reaches every host. The short form (under a minute), never the
        documented 10,000 hosts."""
        b = self.release_bin
        short = "--hosts 200 --services 20 --changes 3 --idle-seconds 2 --proxies 1"
        self.run(f"{b}/fleet-benchmark {short} > /dev/null", ROOT, what=f"fleet-benchmark {short}")

    def scripts(self, commands):
        for command in commands:
            script = command.split()[0]
            self.run(f"{script} 1 > /dev/null", ROOT, what=f"{script} 1")

    def instructions(self, commands):
        self.run(f"LOOKUP_PROFILE={self.release_bin}/lookup-profile Benchmarks/count-instructions.sh 2000 > /dev/null",
                 ROOT, what="Benchmarks/count-instructions.sh 2000 (LOOKUP_PROFILE: the release build's)")

    def foreign_keys(self, commands):
        self.run(f"Benchmarks/fleet-foreign-keys.sh {self.release_bin}/envctl -- 1 > /dev/null", ROOT,
                 what="Benchmarks/fleet-foreign-keys.sh envctl -- 1")

    def grpc_proxy(self, commands):
        # Ports BASE_PORT+1 to +10, free now (the default's may be taken on a shared machine).
        import socket
        for base in range(47000, 60000, 170):
            try:
                held = []
                for port in range(base + 1, base + 11):
                    sock = socket.socket()
                    held.append(sock)
                    sock.bind(("127.0.0.1", port))
                break
            except OSError:
                continue
            finally:
                for sock in held:
                    sock.close()
        self.run(f"N_PROC=1 PER=2 CHANGES=2 IDLE=1 BASE_PORT={base} Benchmarks/fleet-grpc-proxy.sh > /dev/null", ROOT,
                 timeout=120, what="N_PROC=1 PER=2 CHANGES=2 IDLE=1 Benchmarks/fleet-grpc-proxy.sh")

    def perf(self, commands):
        self.run(f"perf record -o {self.work}/perf.data {self.release_bin}/lookup-profile fetch 100000 2 > /dev/null", ROOT,
                 what="perf record lookup-profile fetch 100000 2")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print each command and how CI covers it, run nothing")
    parser.add_argument("--only", help="run only the runners whose name matches this pattern")
    parser.add_argument("--release-bin", help="the release build's binaries (default: scripts/build-release.sh --show-bin-path)")
    arguments = parser.parse_args()

    found, missing = {}, []
    for name in documents():
        for line, command in commands(name):
            how = coverage(name, command)
            if how is None:
                missing.append(f"{name}:{line}: {command}")
                continue
            if arguments.list:
                print(f"{name}:{line}: {command}\n    {how[0]}: {how[1]}")
            if how[0] == "run" and command not in found.get(how[1], []):
                found.setdefault(how[1], []).append(command)
    if missing:
        print("documented commands that CI does not run (add an entry to COMMANDS in scripts/documented-commands.py):")
        print("\n".join("  " + entry for entry in missing))
        return 1
    if arguments.list:
        return 0

    debug_bin = subprocess.run(["swift", "build", "--scratch-path", scratch_path("debug"), "--show-bin-path"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    # The debug build has every trait: the fleet's programs are beside envctl.
    etcd_bin = debug_bin
    release_bin = arguments.release_bin or subprocess.run(
        ["scripts/build-release.sh", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    # The fleet's programs, where the runners that use them look (see Runner).
    needed = {"fleet_quickstart": (etcd_bin, ("envctl-fleet", "example-fleet-daemon"),
                                   "swift build --build-tests --enable-all-traits"),
              "fleet": (release_bin, ("envctl", "envctl-fleet"), "scripts/build-release.sh"),
              "foreign_keys": (release_bin, ("envctl", "envctl-fleet"), "scripts/build-release.sh")}
    for name, (folder, programs, build) in needed.items():
        if name not in found or (arguments.only and not re.search(arguments.only, name)):
            continue
        for program in programs:
            if not os.access(os.path.join(folder, program), os.X_OK):
                print(f"documented-commands: {name} needs {program} in {folder}: build it first ({build}; "
                      "scripts/test.sh does)")
                return 1
    runner = Runner(debug_bin, etcd_bin, release_bin)
    # The daemon's commands first; then two groups side by side: what computes (the
    # benchmarks, compiled scripts, valgrind), and what waits on etcd.
    groups = [["readme_daemon", "files", "daemon"],
              ["benchmarks", "scripts", "instructions", "perf"],
              ["fleet_quickstart", "fleet", "foreign_keys", "grpc_proxy"]]

    def run_group(names, keep):
        if keep:
            runner.local.lines = []
        for name in names:
            if name in found and (not arguments.only or re.search(arguments.only, name)):
                runner.say(f"== {name}: {len(found[name])} documented command(s)")
                try:
                    getattr(runner, name)(found[name])
                except Exception as error:  # noqa: BLE001 - a runner's own failure is a failed command
                    runner.failures.append(f"{name}: {error!r}")
                    runner.say(f"  FAIL {name}: {error!r}")
        if keep:
            print("\n".join(runner.local.lines), flush=True)

    try:
        run_group(groups[0], keep=False)
        side = threading.Thread(target=run_group, args=(groups[2], True))
        side.start()
        run_group(groups[1], keep=False)
        side.join()
    finally:
        shutil.rmtree(runner.work, ignore_errors=True)
    if runner.failures:
        print("documented commands that failed:")
        print("\n".join("  " + failure for failure in runner.failures))
        return 1
    print(f"== every documented command ran ({sum(len(c) for c in found.values())} here, the others in CI's other steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
