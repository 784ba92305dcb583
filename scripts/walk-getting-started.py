#!/usr/bin/env python3
"""Walks "Getting started" (Sources/Environments/Environments.docc/GettingStarted.md) from "Your
own daemon" on: every command of its ```sh blocks, in order, as written wherever possible, and
every outcome its comments promise, checked.

    scripts/walk-getting-started.py [--list] [--keep] [--suite bookworm|trixie] [--url URL] [-v]

Each command (a line of a block, without its `# comment`) must match one entry of STEPS below,
and its comment must be the one that entry checks: a new command, or a new promise in a comment,
fails the walk until the table says how it runs and what is checked. How a command runs:

  packages   `apt-get install` lines: checked as already satisfied (`dpkg -s` of each package),
             not run (no network wanted; scripts/install-packages.sh installs them);
  host       run as written by bash on this machine, in the walk's directory (a `cd` moves it);
  daemon     `swift run greeter` ("in the terminal"): started as written in its own session, its
             output read until the promised lines are seen (a deadline, not a fixed wait), left
             running for the commands of "another terminal", then stopped as Ctrl-C does
             (SIGINT to its process group): it must exit with status 0 after logging "stopped";
  terminal2  a command "in another terminal": run as written while the daemon runs;
  build      a `swift build` line: run as written (see "Cost" below);
  copy-in    `sudo install ... /usr/local/bin/` and `/etc/...`: run as written on this machine
             (the `$(swift build --show-bin-path)` in them needs the host's toolchain), with `sudo`
             dropped and the destination read as a path in the container's root;
  container  run as written (`sudo` dropped: the walk is root there) by bash inside a booted
             systemd container (Debian bookworm, systemd 252: the guide's Debian 12; e2e/ of
             Tests/EndToEnd boots it); `journalctl -f` runs bounded (`timeout 5`).

Every `sed -i` must change the file it edits (a sed that matches nothing is how the guide
contradicted itself before). The commands before "Your own daemon" are other steps' (STEPS says
which), and are only matched, not run.

The clone: `git clone "$SWIFT_ENVIRONMENTS_URL"` clones this repository's committed HEAD
(file://ROOT, or --url): commit before a local run.

Cost. The guide builds greeter twice (debug for `swift run`, release) and envctl in release from
the clone. Measured 2026-11-28 on two cores shared with other builds (load 25 to 37), cold:
greeter release 1,405 s, greeter debug about 780 s, envctl release more than 1,900 s; warm (a
commit that changes nothing compiled), the whole walk 52 s: `swift run` 12.5 s, the release
builds 6.3 s and 2.0 s, the bookworm container beside them, its steps about 8 s (5 of them the
bounded `journalctl -f`). The walk runs the builds as written, and
keeps them warm between runs in a FIXED directory, `run/` in `scratch_path walk`
(scripts/lib/scratch.sh: under CI's build cache, else .build-walk in the clone): the commands that make the sources (the
clone, the copy, the renames and seds) run as written in a new temporary directory; their result
is then mirrored into the fixed directory file by file, rewriting only the files whose content
differs and keeping the `.build` (and `Package.resolved`) of greeter and of the clone (an unchanged file keeps its inode
and time stamps, so SwiftPM rebuilds only what the new commit changed). The alternative, taking
the release graph's minimal-daemon and envctl (scripts/build-release.sh) instead of building,
would cost nothing but would not build the renamed package the guide's seds produce, which is
what a reader's walk depends on; so the walk builds, and a commit that changes nothing compiled
costs no compilation at all.

Needs root, systemd-nspawn and the cached root file systems of Tests/EndToEnd (run_e2e.py
--prepare); without them the walk prints SKIPPED and exits 0 (1 when CI is set). Exit status 0
when every command ran and every promise held. Python 3 standard library only.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "EndToEnd"))
from e2e.common import Options, ScenarioAbort, skip_or_fail  # noqa: E402
from e2e.container import Container  # noqa: E402
from e2e.rootfs import ensure_rootfs  # noqa: E402
from lib.scratch import scratch_path  # noqa: E402
from lib.shell import run_in_session  # noqa: E402

GUIDE = "Sources/Environments/Environments.docc/GettingStarted.md"
START = "### Your own daemon"
BLOCK = re.compile(r"^```(?:sh|bash|shell|console)[^\n]*\n(.*?)^```", re.S | re.M)
GREETING = r"greeter: Hello from greeter\b(?! *#)"  # a greeting, not the effective settings' "Greeting=Hello from greeter  # file"
BUILD_TIMEOUT = 3600  # a cold build on a loaded machine; the budget of CI is the real limit


def say(text):
    print(text, flush=True)


def commands():
    """The guide's commands: (line number, command, comment or None, in the walk)."""
    text = open(os.path.join(ROOT, GUIDE), encoding="utf-8").read()
    start = text.find(START)
    if start < 0:
        raise SystemExit(f"walk: no '{START}' heading in {GUIDE}")
    for match in BLOCK.finditer(text):
        first = text.count("\n", 0, match.start()) + 2
        lines = match.group(1).split("\n")
        index = 0
        while index < len(lines):
            number = first + index
            command, comment = split_comment(lines[index])
            while command.rstrip().endswith("\\") and index + 1 < len(lines):
                index += 1
                more, more_comment = split_comment(lines[index])
                command = command.rstrip().removesuffix("\\").rstrip() + " " + more.strip()
                comment = more_comment or comment
            index += 1
            if command.strip() and not command.strip().startswith("#"):
                yield number, command.strip(), comment, match.start() > start


def split_comment(line):
    """A comment after two spaces or more ends a line; quoted text keeps its #."""
    found = re.search(r"\s{2,}#\s?(.*)$", line)
    return (line[:found.start()], found.group(1).strip()) if found else (line, None)


class Step:
    """How one kind of command runs, and the check of what its comment promises."""

    def __init__(self, command, how, promise=None, check=None, note=""):
        self.command, self.how, self.promise, self.check, self.note = command, how, promise, check, note

    def matches(self, command, comment):
        if not re.search(self.command, command):
            return False
        if self.promise is None:
            return comment is None
        return comment is not None and re.fullmatch(self.promise, comment) is not None


# -- the checks of what the comments promise ------------------------------------------------------
# Each gets the walk and the result of its command, and returns failures (strings).

def check_started(walk, result):
    """`systemctl start` returned: the unit is already active with its first configuration."""
    props = walk.show("ActiveState", "SubState", "StatusText")
    ok = (props.get("ActiveState"), props.get("SubState")) == ("active", "running") and \
        props.get("StatusText") == "Environment Release, configuration generation 1"
    return [] if ok else [f"when systemctl start returned: {props}"]


def check_status(walk, result):
    text = "Environment Release, configuration generation 1"
    return [] if text in result.stdout else [f"systemctl status does not show {text!r}"]


def check_follow(walk, result):
    return [] if "Hello from greeter" in result.stdout else ["journalctl -f showed no 'Hello from greeter'"]


def check_reload_applied(walk, result):
    """Exit 0; the verdict (envctl's, in the unit's journal) is applied, or unchanged when the
    file watcher applied the edit first; either way the daemon runs the new greeting."""
    failures = []
    journal = walk.journal_since(until="configuration changed: Greeting")
    if not re.search(r"reloaded: .*changed: Greeting|reloaded: configuration unchanged", journal):
        failures.append("no 'reloaded: ... changed: Greeting' or 'reloaded: configuration unchanged' in the journal")
    if "configuration changed: Greeting" not in journal:
        failures.append("the daemon did not log 'configuration changed: Greeting'")
    return failures


def check_recent_lines(walk, result):
    failures = []
    for text in ("configuration changed: Greeting", "Hello again"):
        if text not in result.stdout:
            failures.append(f"no {text!r} in its output")
    if failures:
        return failures
    if result.stdout.index("configuration changed: Greeting") > result.stdout.rindex("Hello again"):
        return ["'Hello again' is not after 'configuration changed: Greeting'"]
    return []


def check_show(walk, result):
    out = result.stdout
    wanted = ["Greeting", "Hello again", "GreetingInterval", "LogLevel", "/etc/greeter/Environments.plist"]
    missing = [text for text in wanted if text not in out]
    return [f"envctl show lacks {missing}"] if missing else []


def check_rejected(walk, result):
    """Non-zero; the reason names the key and its bounds (100ms to 1h); the daemon keeps the
    greeting it runs."""
    failures = []
    if result.returncode == 0:
        failures.append("systemctl reload exited 0 for GreetingInterval 1ms")
    journal = walk.journal_since()
    reason = [line for line in journal.splitlines() if "GreetingInterval" in line]
    if not reason:
        failures.append("the journal does not name GreetingInterval")
    elif not any(re.search(r"100\s?ms|0\.1\s?s", line) and re.search(r"1\s?h|3600", line) for line in reason):
        failures.append(f"the journal's lines on GreetingInterval do not give its bounds: {reason[-3:]}")
    shown = walk.container_run("envctl show --app-name greeter")
    if "Hello again" not in shown.stdout or "1min" not in shown.stdout:
        failures.append("after the rejected reload, the daemon does not run the configuration it ran")
    return failures


def check_enabled(walk, result):
    state = walk.container_run("systemctl is-enabled greeter").stdout.strip()
    return [] if state == "enabled" else [f"systemctl is-enabled greeter: {state!r}"]


def check_stopped(walk, result):
    failures = []
    props = walk.show("ActiveState", "Result", "ExecMainStatus")
    if props.get("ActiveState") != "inactive" or props.get("Result") != "success" or props.get("ExecMainStatus") != "0":
        failures.append(f"after systemctl stop: {props}")
    stopped = r"^.*greeter.*\bstopped$"
    # The whole unit's journal, not the part after the step's cursor: the service runs once in
    # this container, so its one "stopped" is this stop's. (Once, under a load of 15-20, the
    # line was in the journal but not after the cursor within the 10 s read: cause not found.)
    if not re.search(stopped, walk.journal_since(until=stopped, seconds=30, whole=True), re.M):
        failures.append("the daemon did not log 'stopped'")
    return failures


def check_renamed(walk, result):
    """No `minimal-daemon` is left in the copy."""
    left = walk.host_run("grep -rl minimal-daemon . || true").stdout.split()
    return [f"still names minimal-daemon: {left}"] if left else []


def check_manifest(walk, result):
    """`Package.swift`'s dependencies then read as the guide's snippet shows them."""
    text = open(os.path.join(ROOT, GUIDE), encoding="utf-8").read()
    found = re.search(r"<!-- snippet-of: Examples/minimal-daemon/Package\.swift -->\n```swift\n(.*?)^```", text, re.S | re.M)
    if not found:
        return ["the guide has no snippet of Package.swift's dependencies"]
    manifest = open(os.path.join(walk.cwd, "Package.swift"), encoding="utf-8").read()
    missing = [line.strip() for line in found.group(1).splitlines()
               if line.strip().startswith(".package(") and line.strip() not in manifest]
    return [f"Package.swift lacks the snippet's {missing}"] if missing else []


def check_terminal_edit(walk, result):
    """While `swift run greeter` runs: the edit is applied at once and greetings come every 2 s."""
    daemon = walk.daemon
    if daemon is None:
        return ["no daemon runs"]
    failures = []
    if not daemon.wait_for(r"configuration changed: GreetingInterval", 15):
        failures.append("the daemon did not log 'configuration changed: GreetingInterval'")
        return failures
    # The sleep that had begun still ends at 5 s; from the next one on, 2 s.
    times = daemon.greetings_after(daemon.mark, count=4, timeout=20)
    gaps = [later - earlier for earlier, later in zip(times[1:], times[2:])]
    if len(gaps) < 2 or not all(1.5 <= gap <= 3.5 for gap in gaps):
        failures.append(f"greetings after the edit are not every 2 s: gaps {[round(g, 1) for g in gaps]}")
    return failures


# -- the table ------------------------------------------------------------------------------------

STEPS = [
    # Before "Your own daemon": other steps run these.
    Step(r"^apt-get update && apt-get install -y libsystemd-dev pkg-config && swift run example-daemon$", "elsewhere",
         note="README.md's same line: scripts/documented-commands.py (readme_daemon)"),
    Step(r"^CREDENTIALS_DIRECTORY=etc/example-credentials swift run example-daemon --config-dir etc/example-daemon "
         r"--environment Staging$", "elsewhere",
         note="etc/example-credentials/README.md's same line; documented-commands.py's daemon runner runs "
              "example-daemon on that credential directory"),
    # Your own daemon: the sources.
    Step(r"^sudo apt-get install -y git libsystemd-dev pkg-config$", "packages"),
    Step(r'^git clone "\$\{SWIFT_ENVIRONMENTS_URL:\?[^}]*\}" swift-environments$', "host"),
    Step(r"^cp -r swift-environments/Examples/minimal-daemon greeter$", "host"),
    Step(r"^cd greeter$", "host"),
    Step(r"^rm -rf \.build$", "host"),
    Step(r"^mv (Sources/minimal-daemon Sources/greeter|minimal-daemon\.service greeter\.service)$", "host"),
    Step(r"^grep -rl minimal-daemon \. \| xargs sed -i 's/minimal-daemon/greeter/g'$", "host", check=check_renamed),
    Step(r"""^sed -i 's\|\.package\(name: "swift-environments", path: "\.\./\.\."\)\|\.package\(path: "\.\./swift-environments"\)\|' Package\.swift$""",
         "host", check=check_manifest),
    # Try it in the terminal, and edit in another.
    Step(r"^swift run greeter --config-dir config$", "daemon",
         promise=r'"Hello from greeter" every 5 seconds \(Debug\); Ctrl-C stops it'),
    Step(r"^sed -i 's\|<string>5s</string>\|<string>2s</string>\|' config/Environments\.plist$", "terminal2",
         promise=r'in another terminal: "configuration changed: GreetingInterval", then every 2 seconds',
         check=check_terminal_edit),
    # The release builds.
    Step(r"^swift build -c release --static-swift-stdlib$", "build"),
    Step(r"^\(cd \.\./swift-environments && swift build -c release --static-swift-stdlib --product envctl\)$", "build"),
    # Into the container's root, then systemd.
    Step(r'^sudo install -m 0755 "\$\(swift build -c release --show-bin-path\)/greeter" /usr/local/bin/$', "copy-in"),
    Step(r'^sudo install -m 0755 "\$\(cd \.\./swift-environments && swift build -c release --show-bin-path\)/envctl" '
         r"/usr/local/bin/$", "copy-in"),
    Step(r"^sudo install -D -m 0644 config/Environments\.plist /etc/greeter/Environments\.plist$", "copy-in"),
    Step(r"^sudo install -m 0644 greeter\.service /etc/systemd/system/$", "copy-in"),
    Step(r"^sudo systemctl daemon-reload$", "container"),
    Step(r"^sudo systemctl start greeter$", "container", promise=r"returns once the configuration is loaded \(READY=1\)",
         check=check_started),
    Step(r"^systemctl status greeter$", "container", promise=r'"Environment Release, configuration generation 1"',
         check=check_status),
    Step(r"^journalctl -u greeter -f$", "container", promise=r'"Hello from greeter" every minute \(Release\)',
         check=check_follow),
    Step(r"^sudo sed -i 's/Hello from greeter/Hello again/' /etc/greeter/Environments\.plist$", "container"),
    Step(r"^sudo systemctl reload greeter$", "container",
         promise=r'applied, or "configuration unchanged" when the file watcher was first', check=check_reload_applied),
    Step(r"^journalctl -u greeter -n 10$", "container",
         promise=r'"configuration changed: Greeting", "Hello again", then the reload', check=check_recent_lines),
    Step(r"^sudo envctl show --app-name greeter$", "container", promise=r"every value and the file it came from",
         check=check_show),
    Step(r"^sudo sed -i 's\|<string>1min</string>\|<string>1ms</string>\|' /etc/greeter/Environments\.plist$", "container"),
    Step(r"^sudo systemctl reload greeter$", "container",
         promise=r"fails; the journal names GreetingInterval and its bounds", check=check_rejected),
    Step(r"^sudo sed -i 's\|<string>1ms</string>\|<string>1min</string>\|' /etc/greeter/Environments\.plist$", "container"),
    Step(r"^sudo systemctl enable greeter$", "container", promise=r"start it at boot", check=check_enabled),
    Step(r"^sudo systemctl stop greeter$", "container",
         promise=r'SIGTERM: both services stop, "stopped", exit status 0', check=check_stopped),
]


def step_for(command, comment):
    for step in STEPS:
        if step.matches(command, comment):
            return step
    return None


# -- the fixed directory ---------------------------------------------------------------------------

def mirror(source, destination, keep=(".build", ".swiftpm", "Package.resolved")):
    """Makes `destination` hold exactly `source`'s files, rewriting only those whose content (or
    mode, or link target) differs, and leaving the top-level `keep` entries of `destination`
    alone (what a build made: a reader's second walk has them too). Returns the number of files
    written."""
    written = 0
    os.makedirs(destination, exist_ok=True)
    for directory, subdirectories, files in os.walk(source):
        relative = os.path.relpath(directory, source)
        target_directory = os.path.normpath(os.path.join(destination, relative))
        if os.path.islink(target_directory) or (os.path.exists(target_directory) and not os.path.isdir(target_directory)):
            os.remove(target_directory)
        os.makedirs(target_directory, exist_ok=True)
        names = set(subdirectories) | set(files)
        for name in os.listdir(target_directory):
            if relative == "." and name in keep:
                continue
            if name not in names:
                path = os.path.join(target_directory, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.remove(path)
        for name in list(subdirectories):
            if os.path.islink(os.path.join(directory, name)):  # os.walk lists links to directories here
                subdirectories.remove(name)
                files.append(name)
        for name in files:
            written += copy_if_different(os.path.join(directory, name), os.path.join(target_directory, name))
    return written


def copy_if_different(source, target):
    if os.path.islink(source):
        link = os.readlink(source)
        if os.path.islink(target) and os.readlink(target) == link:
            return 0
        remove_path(target)
        os.symlink(link, target)
        return 1
    if os.path.isfile(target) and not os.path.islink(target):
        same_mode = (os.stat(source).st_mode & 0o7777) == (os.stat(target).st_mode & 0o7777)
        if same_mode and os.path.getsize(source) == os.path.getsize(target):
            with open(source, "rb") as one, open(target, "rb") as other:
                if one.read() == other.read():
                    return 0
    remove_path(target)
    shutil.copy2(source, target)
    return 1


def remove_path(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


# -- the daemon in "the terminal" ------------------------------------------------------------------

class Daemon:
    """`swift run greeter` in its own session; its output, with the time each line arrived."""

    def __init__(self, command, cwd, env):
        self.lines = []  # (monotonic time, line)
        self.mark = 0
        self.log = tempfile.NamedTemporaryFile(prefix="walk-greeter-", suffix=".log", delete=False)
        self.process = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.reader = open(self.log.name, errors="replace")
        self.partial = ""

    def poll(self):
        chunk = self.reader.read()
        if chunk:
            now = time.monotonic()
            text = self.partial + chunk
            *complete, self.partial = text.split("\n")
            self.lines += [(now, line) for line in complete]

    def wait_for(self, pattern, timeout, start=None):
        """Waits for a line matching pattern after line `start` (default: the mark); moves the mark past it."""
        start = self.mark if start is None else start
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            for index in range(start, len(self.lines)):
                if re.search(pattern, self.lines[index][1]):
                    self.mark = index + 1
                    return self.lines[index]
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.poll()
                return None
            time.sleep(0.05)

    def greetings_after(self, start, count, timeout):
        times = []
        deadline = time.monotonic() + timeout
        while len(times) < count and time.monotonic() < deadline:
            found = self.wait_for(GREETING, deadline - time.monotonic(), start=start)
            if found is None:
                break
            times.append(found[0])
            start = self.mark
        return times

    def interrupt(self, timeout=20):
        """Ctrl-C: SIGINT to the foreground process group."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
        try:
            status = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            status = self.process.wait()
        self.poll()
        return status

    def tail(self, count=25):
        self.poll()
        return "\n".join("       | " + line for _, line in self.lines[-count:])

    def close(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.reader.close()
        os.unlink(self.log.name)


# -- the walk --------------------------------------------------------------------------------------

class Result:
    def __init__(self, returncode, stdout):
        self.returncode, self.stdout = returncode, stdout


class Walk:
    def __init__(self, arguments):
        self.arguments = arguments
        self.failures = []
        self.fixed = os.path.join(scratch_path("walk"), "run")
        self.sources = tempfile.mkdtemp(prefix="walk-getting-started-")
        self.cwd = self.sources
        self.mirrored = False
        self.daemon = None
        self.container = None
        self.cursor = None
        self.after_sed = False
        self.boot_thread, self.boot_error, self.booted = None, None, 0.0
        self.env = dict(os.environ, SWIFT_ENVIRONMENTS_URL=arguments.url)
        for key in ("NOTIFY_SOCKET", "JOURNAL_STREAM", "WATCHDOG_USEC", "WATCHDOG_PID", "CONFIGURATION_DIRECTORY",
                    "RUNTIME_DIRECTORY", "CREDENTIALS_DIRECTORY", "INVOCATION_ID", "APP_ENVIRONMENT"):
            self.env.pop(key, None)
        self.runtime = tempfile.mkdtemp(prefix="walk-greeter-run-")

    # The host ------------------------------------------------------------------------------------

    def host_run(self, command, timeout=600):
        return Result(*run_in_session(command, self.cwd, self.env, timeout))

    def enter_fixed_directory(self):
        """Before the first build: the sources the commands made, mirrored into the fixed
        directory (builds kept); the walk goes on there, in the same relative place."""
        if self.mirrored:
            return
        started = time.monotonic()
        relative = os.path.relpath(self.cwd, self.sources)
        os.makedirs(self.fixed, exist_ok=True)
        written = 0
        for name in sorted(os.listdir(self.sources)):
            written += mirror(os.path.join(self.sources, name), os.path.join(self.fixed, name))
        for name in os.listdir(self.fixed):
            if name not in os.listdir(self.sources):
                remove_path(os.path.join(self.fixed, name))
        self.cwd = os.path.normpath(os.path.join(self.fixed, relative))
        self.mirrored = True
        say(f"  ..   {time.monotonic() - started:5.1f} s  (the sources mirrored into {self.fixed}: {written} files written; "
            "builds kept)")

    # The container -------------------------------------------------------------------------------

    def start_boot(self):
        """Boots the container beside the host's commands (the builds), for the later steps."""
        def boot():
            started = time.monotonic()
            try:
                self.container = Container(f"walk-{os.getpid()}", ensure_rootfs(self.arguments.suite))
                self.container.prepare()
                self.container.boot()
                self.booted = time.monotonic() - started
            except BaseException as error:  # noqa: B036 (reported where the container is needed)
                self.boot_error = error
        self.boot_thread = threading.Thread(target=boot, daemon=True)
        self.boot_thread.start()

    def boot(self):
        """Waits for the container."""
        if self.boot_thread is not None:
            self.boot_thread.join()
            self.boot_thread = None
            if self.boot_error is not None:
                raise RuntimeError(f"the {self.arguments.suite} container did not boot: {self.boot_error}")
            say(f"  ..   {self.booted:5.1f} s  (a {self.arguments.suite} container booted, beside the commands above)")

    def container_run(self, command, timeout=120):
        try:
            result = self.container.run(["bash", "-c", command], timeout=timeout)
        except ScenarioAbort as error:
            return Result(124, str(error))
        return Result(result.returncode, result.stdout + result.stderr)

    def show(self, *properties):
        out = self.container_run(f"systemctl show greeter -p {','.join(properties)}").stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def take_cursor(self):
        out = self.container_run("journalctl --show-cursor -n 0 --no-pager").stdout
        self.cursor = out.strip().split("cursor: ")[-1] if "cursor: " in out else None

    def journal_since(self, until=None, seconds=10, whole=False):
        """The unit's journal since the cursor; with `until` (a pattern), read again for up to
        `seconds` until it shows: a service's last lines on its standard output can reach the
        journal just after `systemctl stop` returns."""
        after = f"--after-cursor '{self.cursor}'" if self.cursor and not whole else ""
        deadline = time.monotonic() + seconds
        while True:
            journal = self.container_run(f"journalctl -u greeter {after} --no-pager -o short").stdout
            if until is None or re.search(until, journal, re.M) or time.monotonic() >= deadline:
                return journal
            time.sleep(0.2)

    # One command ---------------------------------------------------------------------------------

    def run(self, number, command, comment, step):
        if step.how == "elsewhere":
            say(f"  --   {'':5}    {GUIDE}:{number}: {command}  ({step.note})")
            return True
        if self.daemon is not None and step.how != "terminal2":
            self.stop_daemon()
        edited = self.sed_target(command)
        before = self.read(edited) if edited else None
        started = time.monotonic()
        fatal = False
        if step.how == "packages":
            packages = command.split("install -y", 1)[1].split()
            result = self.host_run("dpkg -s " + " ".join(packages) + " >/dev/null")
            command_shown = f"{command}  (dpkg -s: already satisfied)"
            fatal = result.returncode != 0
        elif step.how == "host":
            result = self.host_run(command)
            if re.fullmatch(r"cd (\S+)", command):
                self.cwd = os.path.normpath(os.path.join(self.cwd, command.split()[1]))
            command_shown, fatal = command, result.returncode != 0
        elif step.how == "build":
            self.enter_fixed_directory()
            result = self.host_run(command, timeout=BUILD_TIMEOUT)
            command_shown, fatal = command, result.returncode != 0
        elif step.how == "daemon":
            self.enter_fixed_directory()
            return self.start_daemon(number, command)
        elif step.how == "terminal2":
            result = self.host_run(command)
            command_shown = f"{command}  (while the daemon runs)"
        elif step.how == "copy-in":
            self.boot()
            root = self.container.host_path("/")
            mapped = re.sub(r"^sudo ", "", command)
            mapped = re.sub(r" (/usr/local/bin/|/etc/)", lambda m: f" {root.rstrip('/')}{m.group(1)}", mapped)
            result = self.host_run(mapped)
            command_shown, fatal = command, result.returncode != 0
        elif step.how == "container":
            self.boot()
            # A sed and the command after it share one mark: the file watcher may act on the
            # edit before the next command starts.
            if not self.after_sed:
                self.take_cursor()
            self.after_sed = edited is not None
            inside = re.sub(r"^sudo ", "", command)
            if re.search(r"journalctl .*-f$", inside):
                inside = f"timeout 5 {inside}"
                result = self.container_run(inside)
                if result.returncode == 124:  # the bound, as Ctrl-C after a while
                    result.returncode = 0
            else:
                result = self.container_run(inside)
            command_shown = command
            fatal = result.returncode != 0 and step.check is not check_rejected
        else:
            raise AssertionError(step.how)
        took = time.monotonic() - started
        failures = []
        expected_failure = step.check is check_rejected
        if result.returncode != 0 and not expected_failure:
            failures.append(f"exit status {result.returncode}")
        if edited and before is not None and self.read(edited) == before:
            failures.append(f"sed changed nothing in {edited}")
        if step.check is not None:
            failures += step.check(self, result)
        say(f"  {'ok  ' if not failures else 'FAIL'} {took:5.1f} s  {GUIDE}:{number}: {command_shown}"
            + (f"  # {comment}" if comment else ""))
        if failures:
            self.failures += [f"{GUIDE}:{number}: {command}: {failure}" for failure in failures]
            for failure in failures:
                say(f"       - {failure}")
            say("\n".join("       | " + line for line in result.stdout.rstrip().splitlines()[-25:]))
        elif self.arguments.verbose and result.stdout.strip():
            say("\n".join("       | " + line for line in result.stdout.rstrip().splitlines()[-25:]))
        return not fatal

    def sed_target(self, command):
        """The file a `sed -i` edits (in the container or here), for the check that it changed."""
        found = re.fullmatch(r"(?:sudo )?sed -i '[^']*' (\S+)", command)
        return found.group(1) if found else None

    def read(self, path):
        if path.startswith("/"):
            if self.container is None:
                return None
            path = self.container.host_path(path)
        else:
            path = os.path.join(self.cwd, path)
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError:
            return None

    def start_daemon(self, number, command):
        """The terminal: runs until the commands of "another terminal" are done."""
        started = time.monotonic()
        env = dict(self.env, RUNTIME_DIRECTORY=self.runtime)  # its control socket, not in /run
        self.daemon = Daemon(command, self.cwd, env)
        first = self.daemon.wait_for(GREETING, BUILD_TIMEOUT)
        failures = []
        if first is None:
            failures.append("no 'Hello from greeter' (did it build?)")
        else:
            built = first[0] - started
            second = self.daemon.wait_for(GREETING, 15)
            gap = second[0] - first[0] if second else None
            if gap is None or not 4 <= gap <= 7.5:
                failures.append(f"the second greeting is not 5 s after the first: {gap}")
            say(f"  {'ok  ' if not failures else 'FAIL'} {built:5.1f} s  {GUIDE}:{number}: {command}  "
                f"(built and greeting; then every {gap and round(gap, 1)} s)")
        if failures:
            self.failures += [f"{GUIDE}:{number}: {command}: {failure}" for failure in failures]
            say("\n".join(f"       - {failure}" for failure in failures))
            say(self.daemon.tail())
            return False
        return True

    def stop_daemon(self):
        """Ctrl-C stops it: exit status 0 after 'stopped'."""
        status = self.daemon.interrupt()
        stopped = any(re.search(r"\bstopped$", line) for _, line in self.daemon.lines)
        ok = status == 0 and stopped
        say(f"  {'ok  ' if ok else 'FAIL'}          Ctrl-C (SIGINT): exit status {status}, "
            f"{'' if stopped else 'no '}'stopped'")
        if not ok:
            self.failures.append(f"Ctrl-C: exit status {status}, 'stopped' logged: {stopped}")
            say(self.daemon.tail())
        self.daemon.close()
        self.daemon = None

    def close(self):
        if self.daemon is not None:
            self.daemon.close()
        if self.boot_thread is not None:
            self.boot_thread.join()
        if self.container is not None:
            if self.failures and self.container.pid:
                say(self.container_run("journalctl -u greeter --no-pager -n 40 -o short-precise").stdout)
            self.container.shutdown()
        if not self.arguments.keep:
            shutil.rmtree(self.sources, ignore_errors=True)
        shutil.rmtree(self.runtime, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print each command and how it runs; run nothing")
    parser.add_argument("--suite", default="bookworm", choices=["bookworm", "trixie"],
                        help="the container's Debian (bookworm: systemd 252, the guide's Debian 12)")
    parser.add_argument("--url", default=f"file://{ROOT}", help="what `git clone` clones (default: this clone's HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory of the sources")
    parser.add_argument("-v", "--verbose", action="store_true")
    arguments = parser.parse_args()
    Options.verbose = arguments.verbose

    found = list(commands())
    uncovered = [(number, command, comment) for number, command, comment, _ in found if step_for(command, comment) is None]
    for number, command, comment in uncovered:
        say(f"walk: {GUIDE}:{number}: no entry of STEPS runs this command with this comment (a new command or a new "
            f"promise needs one): {command}" + (f"  # {comment}" if comment else ""))
    if arguments.list:
        for number, command, comment, _ in found:
            step = step_for(command, comment)
            say(f"{GUIDE}:{number}: {command}" + (f"  # {comment}" if comment else "")
                + f"\n    -> {step.how if step else 'NOT COVERED'}{' (' + step.note + ')' if step and step.note else ''}"
                + (f"; checks: {step.check.__name__}" if step and step.check else "")
                + ("; checks: start_daemon, stop_daemon" if step and step.how == "daemon" else ""))
        return 1 if uncovered else 0
    if uncovered:
        return 1

    if os.geteuid() != 0:
        skip_or_fail("the walk of Getting started needs root (systemd-nspawn, mounts)")
    for tool in ("systemd-nspawn", "nsenter", "swift", "git"):
        if shutil.which(tool) is None:
            skip_or_fail(f"the walk of Getting started needs {tool}")

    walk = Walk(arguments)
    started = time.monotonic()

    def interrupted(number, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    say(f"== walking {GUIDE} (sources in {walk.sources}, builds in {walk.fixed})")
    try:
        walk.start_boot()
        for number, command, comment, walked in found:
            if not walk.run(number, command, comment, step_for(command, comment)):
                say("  (the walk stops here: what follows depends on this command)")
                break
        else:
            if walk.daemon is not None:
                walk.stop_daemon()
    except KeyboardInterrupt:
        walk.failures.append("interrupted")
    except Exception as error:  # a container that did not boot, a command that hung
        traceback.print_exc()
        walk.failures.append(f"the walk stopped: {error}")
    finally:
        walk.close()
    took = time.monotonic() - started
    if walk.failures:
        say(f"walk of Getting started: {len(walk.failures)} failures ({took:.0f} s)")
        for failure in walk.failures:
            say(f"  FAILED: {failure}")
        return 1
    say(f"walk of Getting started: every command ran and every promise held ({took:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
