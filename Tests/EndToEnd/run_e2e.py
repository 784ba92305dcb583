#!/usr/bin/env python3
"""End-to-end tests of example-daemon and envctl under a real systemd.

Boots Debian bookworm (systemd 252) and trixie (systemd 257) root file systems with
systemd-nspawn, installs the static release build, the unit files from systemd/ and the
configuration from etc/, and runs scenarios 1-9 (see README.md next to this file) against:

  252-notify         bookworm, example-daemon.service               (Type=notify, ExecReload=envctl reload)
  257-notify-reload  trixie,   example-daemon-notify-reload.service (Type=notify-reload)
  257-notify         trixie,   example-daemon.service               (Type=notify, ExecReload=envctl reload)

Python 3 standard library only. Run as root:  python3 Tests/EndToEnd/run_e2e.py
"""

import argparse
import contextlib
import fcntl
import glob
import json
import os
import plistlib
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE_VARIABLE = "SWIFT_ENVIRONMENTS_E2E_CACHE"
DEFAULT_CACHE = "/var/cache/swift-environments-e2e"
DEBIAN_MIRROR = os.environ.get("SWIFT_ENVIRONMENTS_E2E_MIRROR", "http://deb.debian.org/debian")

APPLIED_ID = "952e4cbc030a4670aea6c53a74365a46"
REJECTED_ID = "c7876320c0e5489388c8c976a77710ce"
PENDING_ID = "d27bae4e53404fe1b9deceadf1821d7e"
STARTED_ID = "39f53479d3a045ac8e11786248231fbf"  # systemd: "Started UNIT"
PROCESS_EXITED_ID = "98e322203f7a4ed290d09fe03c09fe15"  # systemd: "Main process exited, code=..., status=..."
UNIT_SUCCESS_ID = "7ad2d189f7e94e70a38c781354912448"  # systemd: "UNIT: Deactivated successfully."
UNIT_FAILED_ID = "d9b373ed55a64feb8242e02dbe79a49c"  # systemd: "UNIT: Failed with result ..."

CONFIG_DIR = "/etc/example-daemon"
MAIN_FILE = CONFIG_DIR + "/Environments.plist"
DROPIN_DIR = CONFIG_DIR + "/Environments.plist.d"
SHIPPED_DROPIN = DROPIN_DIR + "/50-timeouts.plist"
STATE_FILE = "/run/example-daemon/environment-state.json"
CREDENTIAL_FILE = "/etc/credstore/example-daemon.db-password"
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# The effective settings of the shipped etc/example-daemon for the Release environment (the
# release build's default). Update these when etc/example-daemon changes.
EXPECTED_RELEASE = {
    "APIBaseUrl": "https://api.example.com/v1",
    "APIHost": "api.example.com",
    "Database.Host": "localhost",
    "Database.Name": "example",
    "Database.Password": "<redacted>",
    "Database.Port": "5432",
    "HeartbeatInterval": "1s",
    "ListenPort": "8080",
    "LogLevel": "info",
    "RequestTimeout": "10s",  # from Environments.plist.d/50-timeouts.plist
}


class Configuration:
    def __init__(self, name, suite, version, unit, mode):
        self.name, self.suite, self.version, self.unit, self.mode = name, suite, version, unit, mode

    @property
    def exec_reload(self):
        return self.mode == "notify"


CONFIGURATIONS = [
    Configuration("252-notify", "bookworm", 252, "example-daemon.service", "notify"),
    Configuration("257-notify-reload", "trixie", 257, "example-daemon-notify-reload.service", "notify-reload"),
    Configuration("257-notify", "trixie", 257, "example-daemon.service", "notify"),
]

SCENARIOS = [
    ("1", "start: returns after READY=1, active, StatusText"),
    ("2", "journal: start line, effective settings, no secret"),
    ("3", "good edit + systemctl reload"),
    ("4", "malformed file + reload, then fixed"),
    ("5", "edit without systemctl (rename, in place)"),
    ("6", "LogLevel debug/info by reload"),
    ("7", "watchdog; restart-only key pending"),
    ("8", "plist drop-in; unit drop-in selects Staging"),
    ("9", "stop: STOPPING=1, clean exit"),
    ("10", "built-in configuration: systemctl reload through the control socket"),
]

VERBOSE = False


def log(message):
    print(message, flush=True)


def debug(message):
    if VERBOSE:
        print("    " + message, flush=True)


class Interrupted(BaseException):
    """SIGTERM/SIGHUP: unwind like Ctrl-C so that every container is shut down."""


class ScenarioAbort(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Prerequisites, build, root file systems
# --------------------------------------------------------------------------------------------


def skip_or_fail(reason):
    print("", flush=True)
    print("=" * 100)
    print(f"SKIPPED: end-to-end tests under systemd: {reason}")
    print("=" * 100, flush=True)
    if os.environ.get("CI"):
        print("CI is set: a skipped end-to-end run is a failure.", flush=True)
        sys.exit(1)
    sys.exit(0)


def check_prerequisites(need_swift):
    if not sys.platform.startswith("linux"):
        skip_or_fail(f"needs Linux (this is {sys.platform})")
    if os.geteuid() != 0:
        skip_or_fail("needs root (systemd-nspawn, mounts); run with sudo")
    tools = ["systemd-nspawn", "nsenter", "mount", "umount"]
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        skip_or_fail(f"missing {', '.join(missing)} (Debian: apt-get install systemd-container util-linux)")
    if not os.access("/sys/fs/cgroup", os.W_OK):
        skip_or_fail("/sys/fs/cgroup is not writable: systemd cannot boot in a container here")
    if need_swift and shutil.which("swift") is None:
        skip_or_fail("no swift toolchain to build the release binaries (or pass --binaries DIR)")


def cache_directory():
    return os.environ.get(CACHE_VARIABLE) or DEFAULT_CACHE


def rootfs_complete(path):
    required = ["usr/lib/systemd/systemd", "sbin/init", "usr/bin/systemctl", "usr/bin/journalctl", "etc/os-release"]
    if not all(os.path.exists(os.path.join(path, item)) for item in required):
        return False
    if not (os.path.exists(os.path.join(path, "usr/bin/dbus-daemon")) or os.path.exists(os.path.join(path, "usr/bin/dbus-broker"))):
        return False
    return bool(glob.glob(os.path.join(path, "usr/lib/*/libsystemd.so.0")) + glob.glob(os.path.join(path, "lib/*/libsystemd.so.0")))


def processes_using(path):
    """Process ids whose command line mentions path (for example a background debootstrap)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                arguments = handle.read().split(b"\0")
        except OSError:
            continue
        if any(argument.rstrip(b"/") == path.encode() for argument in arguments):
            found.append(int(entry))
    return found


def ensure_rootfs(suite):
    cache = cache_directory()
    os.makedirs(cache, exist_ok=True)
    target = os.path.join(cache, suite)
    if rootfs_complete(target):
        return target
    with open(os.path.join(cache, f".{suite}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        temporary = target + ".tmp"
        deadline = time.monotonic() + 900
        while processes_using(temporary) and not rootfs_complete(target):
            if time.monotonic() > deadline:
                raise RuntimeError(f"gave up waiting for the debootstrap building {temporary}")
            log(f"  waiting for a running debootstrap into {temporary} ...")
            time.sleep(5)
        if rootfs_complete(target):
            return target
        if shutil.which("debootstrap") is None:
            skip_or_fail(f"no cached root file system at {target} and no debootstrap to build it (apt-get install debootstrap)")
        if os.path.exists(target):
            log(f"  {target} is incomplete; rebuilding it")
            shutil.rmtree(target)
        shutil.rmtree(temporary, ignore_errors=True)
        log(f"  building the {suite} root file system with debootstrap (about a minute) ...")
        started = time.monotonic()
        with open(os.path.join(cache, f"{suite}.log"), "w") as output:
            result = subprocess.run(
                ["debootstrap", "--variant=minbase", "--include=systemd,systemd-sysv,dbus", suite, temporary, DEBIAN_MIRROR],
                stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if result.returncode != 0 or not rootfs_complete(temporary):
            raise RuntimeError(f"debootstrap {suite} failed (exit {result.returncode}); see {cache}/{suite}.log")
        os.rename(temporary, target)
        log(f"  built {target} in {time.monotonic() - started:.0f} s")
        return target


def build_binaries():
    scratch = os.path.join(ROOT, ".build-release")
    common = ["swift", "build", "-c", "release", "--static-swift-stdlib", "--scratch-path", scratch]
    for product in ("example-daemon", "envctl"):
        log(f"  swift build -c release --static-swift-stdlib --product {product} --scratch-path .build-release")
        result = subprocess.run(common + ["--product", product], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            print(result.stdout[-6000:])
            raise RuntimeError(f"building {product} failed (exit {result.returncode})")
    result = subprocess.run(common + ["--show-bin-path"], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True)
    return result.stdout.strip()


# --------------------------------------------------------------------------------------------
# Containers
# --------------------------------------------------------------------------------------------


def run_host(command, **kwargs):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


class Container:
    """One booted systemd in a throw-away copy (an overlay, else a copy) of a cached root."""

    def __init__(self, name, lower):
        self.name = name
        self.lower = lower
        self.workdir = tempfile.mkdtemp(prefix=f"swift-environments-e2e-{name}-", dir="/var/tmp")
        self.root = os.path.join(self.workdir, "root")
        self.mounted = False
        self.process = None
        self.pid = None
        self.console = os.path.join(self.workdir, "console.log")

    # -- lifecycle ---------------------------------------------------------------------------

    def prepare(self):
        upper, work = os.path.join(self.workdir, "upper"), os.path.join(self.workdir, "work")
        for path in (self.root, upper, work):
            os.makedirs(path)
        result = run_host(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={self.lower},upperdir={upper},workdir={work}", self.root])
        if result.returncode == 0:
            self.mounted = True
            debug(f"overlay on {self.root}")
            return
        debug(f"overlay mount failed ({result.stderr.strip()}); copying the root file system")
        os.rmdir(self.root)
        subprocess.run(["cp", "-a", "--reflink=auto", self.lower, self.root], check=True)

    def boot(self, timeout=60):
        with open(self.console, "w") as console:
            self.process = subprocess.Popen(
                ["systemd-nspawn", "--quiet", "-D", self.root, "--boot", "--register=no", "--keep-unit",
                 f"--machine={self.name}", "--private-network"],
                stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        state = ""
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"systemd-nspawn exited with {self.process.returncode}: {self.console_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the container did not finish booting (is-system-running: {state!r}): {self.console_tail()}")
            self.pid = self.find_init()
            if self.pid is None:
                time.sleep(0.05)
                continue
            state = self.run(["systemctl", "is-system-running"], timeout=10).stdout.strip()
            if state in ("running", "degraded"):
                break
            time.sleep(0.1)
        if state == "degraded":
            failed = self.run(["systemctl", "--failed", "--no-legend"]).stdout.strip()
            log(f"  note: container is degraded: {failed}")

    def find_init(self):
        """The container's PID 1: the child of systemd-nspawn in another PID namespace (at
        first, systemd-nspawn's intermediate child is in ours)."""
        own = os.readlink("/proc/self/ns/pid")
        for path in glob.glob(f"/proc/{self.process.pid}/task/*/children"):
            with contextlib.suppress(OSError), open(path) as handle:
                for child in handle.read().split():
                    with contextlib.suppress(OSError):
                        if os.readlink(f"/proc/{child}/ns/pid") != own:
                            return int(child)
        return None

    def console_tail(self):
        with contextlib.suppress(OSError), open(self.console, errors="replace") as handle:
            return handle.read()[-3000:]
        return ""

    def shutdown(self):
        if self.process is not None and self.process.poll() is None:
            if self.pid is not None:
                with contextlib.suppress(Exception):
                    subprocess.run(["nsenter", "-t", str(self.pid), "-a", "systemctl", "poweroff", "--no-block"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=15)
            if self.process.poll() is None:
                log(f"  {self.name}: did not power off; terminating systemd-nspawn {self.process.pid}")
                self.process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=5)
            if self.process.poll() is None:
                log(f"  {self.name}: killing systemd-nspawn {self.process.pid}")
                self.process.kill()
                self.process.wait()
        if self.mounted:
            if run_host(["umount", self.root]).returncode != 0:
                run_host(["umount", "-l", self.root])
            self.mounted = False
        shutil.rmtree(self.workdir, ignore_errors=True)
        with contextlib.suppress(OSError):
            os.rmdir(f"/run/systemd/nspawn/propagate/{self.name}")

    # -- driving -----------------------------------------------------------------------------

    def run(self, command, timeout=60, env=None):
        variables = {"PATH": CONTAINER_PATH, "LANG": "C.UTF-8", "SYSTEMD_PAGER": "", "SYSTEMD_COLORS": "0",
                     "SYSTEMD_URLIFY": "0", "TERM": "dumb"}
        variables.update(env or {})
        full = ["nsenter", "-t", str(self.pid), "-a", "env", "-i"] + [f"{k}={v}" for k, v in variables.items()] + list(command)
        try:
            result = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ScenarioAbort(f"timed out after {timeout} s: {' '.join(command)}")
        result.stdout = result.stdout.decode("utf-8", "replace")
        result.stderr = result.stderr.decode("utf-8", "replace")
        debug(f"$ {' '.join(command)} -> {result.returncode}")
        return result

    def host_path(self, path):
        """The container's path as seen from the host (through its init's root)."""
        return f"/proc/{self.pid}/root{path}" if self.pid else os.path.join(self.root, path.lstrip("/"))

    def read(self, path):
        with open(self.host_path(path), "rb") as handle:
            return handle.read()

    def write_atomic(self, path, data, mode=0o644):
        """Write a temporary file in the same directory and rename it over path (an editor's save)."""
        target = self.host_path(path)
        temporary = os.path.join(os.path.dirname(target), "." + os.path.basename(target) + ".e2e-tmp")
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.rename(temporary, target)

    def write_in_place(self, path, data):
        """Truncate and rewrite the same inode (`cat > file`, `echo ... > file`)."""
        with open(self.host_path(path), "r+b") as handle:
            handle.truncate(0)
            handle.write(data)

    def install(self, binaries, secret):
        """Install binaries, units, catalog, configuration and credential into the root."""
        root = self.root

        def place(source, destination, mode):
            target = os.path.join(root, destination.lstrip("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)
            os.chmod(target, mode)

        for product in ("example-daemon", "envctl"):
            place(os.path.join(binaries, product), f"/usr/local/bin/{product}", 0o755)
        for unit in ("example-daemon.service", "example-daemon-notify-reload.service"):
            place(os.path.join(ROOT, "systemd", unit), f"/etc/systemd/system/{unit}", 0o644)
        place(os.path.join(ROOT, "systemd", "environments.catalog"), "/usr/lib/systemd/catalog/environments.catalog", 0o644)
        etc = os.path.join(root, "etc/example-daemon")
        shutil.rmtree(etc, ignore_errors=True)
        shutil.copytree(os.path.join(ROOT, "etc", "example-daemon"), etc)
        credstore = os.path.join(root, "etc/credstore")
        os.makedirs(credstore, mode=0o700, exist_ok=True)
        os.chmod(credstore, 0o700)
        with open(os.path.join(root, CREDENTIAL_FILE.lstrip("/")), "w") as handle:
            handle.write(secret)
        os.chmod(os.path.join(root, CREDENTIAL_FILE.lstrip("/")), 0o600)


# --------------------------------------------------------------------------------------------
# Journal and unit helpers
# --------------------------------------------------------------------------------------------


def field(entry, name):
    """All values of a journal field as strings (repeated fields are lists; binary ones byte lists)."""
    value = entry.get(name)
    if value is None:
        return []
    if isinstance(value, list) and value and all(isinstance(item, int) for item in value):
        return [bytes(value).decode("utf-8", "replace")]
    if not isinstance(value, list):
        value = [value]
    out = []
    for item in value:
        if isinstance(item, list):
            out.append(bytes(item).decode("utf-8", "replace"))
        elif item is not None:
            out.append(str(item))
    return out


def first(entry, name):
    values = field(entry, name)
    return values[0] if values else None


def key_values(values):
    result = {}
    for item in values:
        key, _, value = item.partition("=")
        result[key] = value
    return result


def wait_for(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


class Scenario:
    """Collects the checks of one scenario: `check` records a failure and continues."""

    def __init__(self, number):
        self.number = number
        self.failures = []
        self.notes = []

    def check(self, condition, message):
        if condition:
            debug(f"ok: {message}")
        else:
            debug(f"FAILED: {message}")
            self.failures.append(message)
        return condition

    def equal(self, actual, expected, what):
        return self.check(actual == expected, f"{what}: expected {expected!r}, got {actual!r}")

    def require(self, condition, message):
        if not self.check(condition, message):
            raise ScenarioAbort(message)

    def note(self, message):
        debug(f"note: {message}")
        self.notes.append(message)


class Harness:
    def __init__(self, configuration, container, secret):
        self.c = configuration
        self.container = container
        self.secret = secret
        self.unit = configuration.unit
        self.generation = 0
        self.environment = "Release"
        self.settings = dict(EXPECTED_RELEASE)
        self.plist = plistlib.loads(container.read(MAIN_FILE))
        self.boot_cursor = self.cursor_before = self.main_pid = None

    # -- systemd ----------------------------------------------------------------------------

    def systemctl(self, *arguments, timeout=60):
        return self.container.run(["systemctl", *arguments], timeout=timeout)

    def show(self, *properties):
        arguments = ["show", self.unit]
        for item in properties:
            arguments += ["-p", item]
        result = self.systemctl(*arguments)
        values = {}
        for line in result.stdout.splitlines():
            key, _, value = line.partition("=")
            values[key] = value
        return values

    def status_text(self):
        return self.show("StatusText")["StatusText"]

    def settled_status_text(self, s=None, what=""):
        """StatusText once no reload is in flight.

        The file watcher sees the same edit that `systemctl reload` was asked to apply. When
        the signal's reload got there first, the watcher's own reload of the same files may
        still be running when `systemctl reload` returns ("Reloading configuration
        (file-change)"); it ends as "unchanged" (or rejected again) within milliseconds.
        """
        status = self.status_text()
        if not status.startswith("Reloading configuration"):
            return status
        settled = wait_for(lambda: (lambda t: None if t.startswith("Reloading configuration") else t)(self.status_text()), 2.0, interval=0.02)
        if s is not None:
            s.note(f"{what}: StatusText was {status!r} (the watcher's reload of the same edit) and then {settled!r}")
        return settled or self.status_text()

    def expected_status(self, generation=None, environment=None):
        return f"Environment {environment or self.environment}, configuration generation {generation or self.generation}"

    def state(self):
        try:
            return json.loads(self.container.read(STATE_FILE))
        except (OSError, ValueError):
            return None

    # -- journal ----------------------------------------------------------------------------

    def cursor(self):
        result = self.container.run(["journalctl", "--all", "-o", "json", "-n", "1", "--no-pager"])
        lines = result.stdout.strip().splitlines()
        return json.loads(lines[-1])["__CURSOR"] if lines else None

    def journal(self, after=None):
        """Every journal entry (all units) after a cursor, in order."""
        command = ["journalctl", "--all", "-o", "json", "--no-pager"]
        if after:
            command.append(f"--after-cursor={after}")
        result = self.container.run(command)
        entries = []
        for line in result.stdout.splitlines():
            with contextlib.suppress(ValueError):
                entries.append(json.loads(line))
        return entries

    def daemon_entries(self, after=None):
        return [entry for entry in self.journal(after) if first(entry, "_SYSTEMD_UNIT") == self.unit]

    def manager_entries(self, after=None):
        """systemd's (PID 1) messages about the unit."""
        return [entry for entry in self.journal(after) if first(entry, "_PID") == "1" and first(entry, "UNIT") == self.unit]

    def wait_entries(self, after, predicate, timeout=3.0, count=1, source=None):
        source = source or self.daemon_entries

        def found():
            matches = [entry for entry in source(after) if predicate(entry)]
            return matches if len(matches) >= count else None

        return wait_for(found, timeout, interval=0.1) or []

    def wait_message(self, after, message, timeout=3.0):
        entries = self.wait_entries(after, lambda e: first(e, "MESSAGE") == message, timeout)
        return entries[0] if entries else None

    def wait_applied(self, after, generation, timeout=3.0):
        entries = self.wait_entries(
            after, lambda e: first(e, "MESSAGE_ID") == APPLIED_ID and first(e, "CONFIG_GENERATION") == str(generation), timeout)
        return entries[0] if entries else None

    def start_line(self, generation=None, environment=None, api=None):
        return (f"APIBaseUrl={api or self.settings['APIBaseUrl']} generation={generation or self.generation} "
                f"environment={environment or self.environment}")

    def notifications(self, after, pid, token, source_timeout=2.0, count=1):
        """PID 1's debug entries for a notification: 'UNIT: Got notification message from PID
        <pid> (READY=1, STATUS=...)' (252) or '... from PID <pid>: READY=1, STATUS=...' (257)."""
        pattern = re.compile(rf"^{re.escape(self.unit)}: Got notification message from PID {pid}(?: \((.*)\)|: (.*))$")

        def match(entry):
            found = pattern.match(first(entry, "MESSAGE") or "")
            return bool(found) and token in (found.group(1) or found.group(2) or "").split(", ")
        return self.wait_entries(after, match, source_timeout, count=count, source=self.manager_entries)

    # -- configuration files ----------------------------------------------------------------

    def edit(self, writer="atomic", **common):
        """Apply changes to Common in Environments.plist, keeping earlier edits."""
        for key, value in common.items():
            self.plist["Common"][key] = value
        data = plistlib.dumps(self.plist, fmt=plistlib.FMT_XML)
        if writer == "atomic":
            self.container.write_atomic(MAIN_FILE, data)
        else:
            self.container.write_in_place(MAIN_FILE, data)

    def expect_api_host(self, host):
        self.settings["APIHost"] = host
        self.settings["APIBaseUrl"] = f"https://{host}/v1"

    # -- shared assertions ------------------------------------------------------------------

    def check_applied_entry(self, s, entry, generation, changed, files=None, what="effective-settings entry"):
        if not s.check(entry is not None, f"{what} (MESSAGE_ID={APPLIED_ID}, CONFIG_GENERATION={generation}) in the journal"):
            return
        s.equal(first(entry, "CONFIG_ENVIRONMENT"), self.environment, f"{what} CONFIG_ENVIRONMENT")
        s.equal(first(entry, "PRIORITY"), "6", f"{what} PRIORITY")
        s.equal(first(entry, "SYSLOG_IDENTIFIER"), "example-daemon", f"{what} SYSLOG_IDENTIFIER")
        s.equal(key_values(field(entry, "CONFIG_SETTING")), self.settings, f"{what} CONFIG_SETTING")
        s.equal(len(field(entry, "CONFIG_SETTING")), len(self.settings), f"{what} number of CONFIG_SETTING fields")
        s.equal(sorted(field(entry, "CONFIG_CHANGED_KEY")), sorted(changed), f"{what} CONFIG_CHANGED_KEY")
        s.equal(field(entry, "CONFIG_SOURCE_FILE"), files or [MAIN_FILE, SHIPPED_DROPIN], f"{what} CONFIG_SOURCE_FILE")
        verb = "loaded" if generation == 1 and not changed else "reloaded"
        s.equal(first(entry, "MESSAGE"),
                f"Configuration {verb}: environment {self.environment}, generation {generation}, {len(self.settings)} settings",
                f"{what} MESSAGE")

    def check_still_running(self, s, main_pid, what):
        props = self.show("ActiveState", "SubState", "MainPID", "NRestarts")
        s.equal((props.get("ActiveState"), props.get("SubState")), ("active", "running"), f"{what}: ActiveState/SubState")
        s.equal(props.get("MainPID"), main_pid, f"{what}: MainPID unchanged")
        s.equal(props.get("NRestarts"), "0", f"{what}: NRestarts")

    def reload_expecting(self, s, what, changed, generation=None):
        """Edit already written: `systemctl reload` at once; it must return with the new generation."""
        before = self.generation
        generation = generation or self.generation + 1
        mark = self.cursor_before
        started = time.monotonic()
        result = self.systemctl("reload", self.unit)
        elapsed = time.monotonic() - started
        status = self.settled_status_text(s, what)
        state = self.state()
        s.equal(result.returncode, 0, f"{what}: systemctl reload exit status (stderr: {result.stderr.strip()!r})")
        s.equal(status, self.expected_status(generation), f"{what}: StatusText right after systemctl reload returned")
        # envctl reload waits for the state file; with notify-reload the daemon writes it before
        # READY=1 ends the reload. Either way it is current when systemctl reload returns.
        s.check(state is not None and state.get("generation") == generation,
                f"{what}: state file generation right after the reload returned: expected {generation}, got {state and state.get('generation')}")
        last = (state or {}).get("lastReload") or {}
        s.check(last.get("outcome") in ("applied", "unchanged") and last.get("generation") == generation,
                f"{what}: state file lastReload is applied/unchanged at generation {generation}: {last}")
        s.note(f"{what}: reload took {elapsed * 1000:.0f} ms; last reload by {last.get('trigger')} ({last.get('outcome')})")
        self.generation = generation
        if self.c.exec_reload:
            # envctl reports the reload its signal caused: it applied the edit, or found it
            # already applied by the file watcher ("unchanged"); nothing else is right.
            applied = f"reloaded: environment {self.environment}, generation {generation}"
            if changed:
                applied += "; changed: " + ", ".join(sorted(changed))
            unchanged = f"reloaded: configuration unchanged, generation {generation}"
            expected = {applied, unchanged} if changed or generation != before else {unchanged}
            entries = self.wait_entries(mark, lambda e: first(e, "SYSLOG_IDENTIFIER") == "envctl")
            said = [first(e, "MESSAGE") for e in entries]
            s.check(len(said) == 1 and said[0] in expected,
                    f"{what}: ExecReload's output in the unit's journal is one of {sorted(expected)}: {said}")
        return result


# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------


@contextlib.contextmanager
def manager_debug_log(h):
    """systemd (PID 1) at log level debug, which logs every sd_notify message it gets.

    Only around windows in which systemd forks nothing for the unit: a forked child logs
    debug messages before it joins the unit's cgroup, journald then caches that process as
    part of init.scope, and the daemon's own entries lose _SYSTEMD_UNIT (journalctl -u).
    """
    previous = h.container.run(["systemctl", "log-level"]).stdout.strip() or "info"
    h.container.run(["systemctl", "log-level", "debug"])
    try:
        yield
    finally:
        h.container.run(["systemctl", "log-level", previous])


def scenario_1(h, s):
    h.boot_cursor = h.cursor()
    started = time.monotonic()
    result = h.systemctl("start", h.unit)
    elapsed = time.monotonic() - started
    props = h.show("ActiveState", "SubState", "StatusText", "Result", "NRestarts", "MainPID", "Type", "NotifyAccess")
    s.require(result.returncode == 0, f"systemctl start exit status 0 (got {result.returncode}: {result.stderr.strip()})")
    s.equal(props.get("ActiveState"), "active", "ActiveState right after systemctl start returned")
    s.equal(props.get("SubState"), "running", "SubState right after systemctl start returned")
    h.generation = 1
    s.equal(props.get("StatusText"), h.expected_status(), "StatusText")
    s.equal(props.get("Result"), "success", "Result")
    s.equal(props.get("NRestarts"), "0", "NRestarts")
    s.equal(props.get("Type"), "notify-reload" if h.c.mode == "notify-reload" else "notify", "unit Type")
    h.main_pid = props.get("MainPID")
    s.require(h.main_pid not in (None, "", "0"), f"a MainPID ({h.main_pid})")
    s.note(f"systemctl start took {elapsed * 1000:.0f} ms")
    # StatusText= travels in the same datagram as READY=1, and ActiveEnterTimestamp is when
    # systemd processed it: the start job waited for it.
    times = h.show("ExecMainStartTimestampMonotonic", "ActiveEnterTimestampMonotonic")
    main_started = int(times.get("ExecMainStartTimestampMonotonic") or 0)
    active_entered = int(times.get("ActiveEnterTimestampMonotonic") or 0)
    s.check(0 < main_started < active_entered,
            f"the unit became active after the main process started (ExecMainStart {main_started}, ActiveEnter {active_entered})")
    s.note(f"READY=1 {(active_entered - main_started) / 1000:.0f} ms after exec")
    entries = h.journal(h.boot_cursor)
    started_entries = [e for e in entries if first(e, "MESSAGE_ID") == STARTED_ID and first(e, "UNIT") == h.unit]
    s.check(bool(started_entries), "systemd's 'Started' entry for the unit")


def scenario_2(h, s):
    line = h.wait_message(h.boot_cursor, h.start_line())
    if s.check(line is not None, f"start line {h.start_line()!r} from the unit"):
        s.equal(first(line, "PRIORITY"), "6", "start line PRIORITY")
        s.equal(first(line, "LISTEN_PORT"), "8080", "start line LISTEN_PORT field")
    applied = h.wait_entries(h.boot_cursor, lambda e: first(e, "MESSAGE_ID") == APPLIED_ID)
    s.equal(len(applied), 1, "number of effective-settings entries after start")
    h.check_applied_entry(s, applied[0] if applied else None, 1, [])
    if applied:
        sources = key_values(field(applied[0], "CONFIG_SETTING_SOURCE"))
        s.check(SHIPPED_DROPIN in sources.get("RequestTimeout", ""), f"RequestTimeout's source names the drop-in: {sources.get('RequestTimeout')!r}")
        s.check(MAIN_FILE in sources.get("APIHost", "") and "Common" in sources.get("APIHost", ""),
                f"APIHost's source names Environments.plist, Common: {sources.get('APIHost')!r}")
    # The catalog is installed: journalctl -x explains the entry.
    explained = h.container.run(["journalctl", "-u", h.unit, f"MESSAGE_ID={APPLIED_ID}", "-x", "-n", "1", "--no-pager"]).stdout
    s.check(f"Subject: Configuration applied: environment {h.environment}, generation 1" in explained,
            "journalctl -x shows the catalog's Subject for the entry")
    # The secret: nowhere in the complete journal, nor in envctl show, while it is in use.
    credentials = {"CREDENTIALS_DIRECTORY": f"/run/credentials/{h.unit}"}
    reveal = h.container.run(["envctl", "get", "--app-name", "example-daemon", "--show-secrets", "Database.Password"], env=credentials)
    s.equal(reveal.stdout.strip(), h.secret, "positive control: envctl get --show-secrets reads the credential")
    dump = h.container.run(["journalctl", "-o", "json", "--all", "--no-pager"], timeout=120)
    s.check(dump.returncode == 0 and len(dump.stdout) > 1000, "journalctl -o json --all produced the journal")
    s.check(h.secret not in dump.stdout, "the credential's text is not in `journalctl -o json --all`")
    decoded = []
    for line in dump.stdout.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            decoded += [value for name in entry for value in field(entry, name)]
    s.check(not any(h.secret in value for value in decoded), "the credential's text is not in any decoded journal field")
    for arguments in (["show"], ["show", "--json"]):
        shown = h.container.run(["envctl", *arguments, "--app-name", "example-daemon"], env=credentials)
        s.equal(shown.returncode, 0, f"envctl {' '.join(arguments)} exit status ({shown.stderr.strip()})")
        s.check(h.secret not in shown.stdout + shown.stderr, f"the credential's text is not in envctl {' '.join(arguments)}")
        s.check("<redacted>" in shown.stdout, f"envctl {' '.join(arguments)} shows Database.Password as <redacted>")
    status = h.systemctl("status", h.unit, "--no-pager", "-l", "-n", "50")
    s.check(h.secret not in status.stdout, "the credential's text is not in systemctl status")


def scenario_3(h, s):
    main_pid = h.main_pid
    before = h.generation
    # A reload without a change: the signal path alone (no file watcher involved).
    h.cursor_before = h.cursor()
    h.reload_expecting(s, "reload without a change", [], generation=before)
    last = (h.state() or {}).get("lastReload") or {}
    # ExecReload=envctl reload asks the control socket (trigger "api"); notify-reload signals.
    expected_trigger = "api" if h.c.exec_reload else "signal"
    s.check(last.get("trigger") == expected_trigger and last.get("outcome") == "unchanged",
            f"a reload without a change is done by {expected_trigger} and unchanged: {last}")
    # A good edit, reloaded at once.
    h.cursor_before = h.cursor()
    h.edit(APIHost="api2.example.com")
    h.expect_api_host("api2.example.com")
    h.reload_expecting(s, "good edit", ["APIBaseUrl", "APIHost"])
    s.equal(h.generation, before + 1, "generation went up by one")
    line = h.wait_message(h.cursor_before, h.start_line())
    s.check(line is not None, f"the new value in the journal: {h.start_line()!r}")
    h.check_applied_entry(s, h.wait_applied(h.cursor_before, h.generation), h.generation, ["APIBaseUrl", "APIHost"])
    h.check_still_running(s, main_pid, "after the reload")


MALFORMED = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Common</key>
	<dict>
		<key>APIHost</key>
		<string>broken.example.com
	</dict>
</plist>
"""


def scenario_4(h, s):
    main_pid = h.main_pid
    generation = h.generation
    running_host = h.container.run(["envctl", "get", "APIHost", "--app-name", "example-daemon"]).stdout.strip()
    mark = h.cursor()
    h.container.write_atomic(MAIN_FILE, MALFORMED)
    result = h.systemctl("reload", h.unit)
    status = h.settled_status_text(s, "malformed file")
    if h.c.exec_reload:
        s.check(result.returncode != 0, f"systemctl reload of a malformed file fails (exit {result.returncode}, stderr {result.stderr.strip()!r})")
        failure = h.wait_entries(mark, lambda e: first(e, "SYSLOG_IDENTIFIER") == "envctl" and MAIN_FILE in (first(e, "MESSAGE") or ""))
        s.check(bool(failure), "ExecReload's reason, naming Environments.plist, is in the unit's journal")
        if failure:
            s.note(f"envctl reload said: {first(failure[0], 'MESSAGE')}")
        reload_result = h.show("ReloadResult").get("ReloadResult")
        if reload_result:
            s.note(f"ReloadResult={reload_result}")
    else:
        s.equal(result.returncode, 0, "systemctl reload exit status (notify-reload cannot fail a reload)")
        s.check(status.startswith(h.expected_status() + "; reload rejected: ") and MAIN_FILE in status,
                f"StatusText says the reload was rejected and names the file: {status!r}")
    rejected = h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") == REJECTED_ID)
    if s.check(bool(rejected), f"a rejected-reload entry (MESSAGE_ID={REJECTED_ID})"):
        entry = rejected[0]
        s.equal(first(entry, "CONFIG_FILE"), MAIN_FILE, "rejected entry CONFIG_FILE")
        s.equal(first(entry, "CONFIG_GENERATION"), str(generation), "rejected entry CONFIG_GENERATION (the kept one)")
        s.equal(first(entry, "PRIORITY"), "3", "rejected entry PRIORITY")
        s.check(bool(first(entry, "CONFIG_ERROR")), f"rejected entry has CONFIG_ERROR: {first(entry, 'CONFIG_ERROR')!r}")
        s.note(f"CONFIG_ERROR={first(entry, 'CONFIG_ERROR')!r} CONFIG_LINE={first(entry, 'CONFIG_LINE')!r}")
    systemctl_status = h.systemctl("status", h.unit, "--no-pager", "-l", "-n", "30").stdout
    s.check(MAIN_FILE in systemctl_status and "reject" in systemctl_status,
            "systemctl status gives the reason with the file name")
    h.check_still_running(s, main_pid, "after the rejected reload")
    s.check(h.status_text().startswith(h.expected_status()), f"StatusText keeps generation {generation}: {h.status_text()!r}")
    state = h.state() or {}
    s.equal(state.get("generation"), generation, "state file generation after the rejected reload")
    # Asked over its control socket, the daemon shows what it runs with, and the rejection.
    shown = h.container.run(["envctl", "show", "--app-name", "example-daemon"])
    s.equal(shown.returncode, 0, f"envctl show --app-name after the rejected reload ({shown.stderr.strip()})")
    s.check(f"# environment {h.environment}, generation {generation}" in shown.stdout,
            f"envctl show: the daemon's generation {generation}: {shown.stdout.splitlines()[:3]}")
    s.check(any(line.startswith("# last reload") and "rejected" in line and MAIN_FILE in line for line in shown.stdout.splitlines()),
            f"envctl show reports the rejection with the file: {shown.stdout.splitlines()[:3]}")
    s.check(bool(running_host) and any(line.startswith("APIHost ") and f"= {running_host} " in line for line in shown.stdout.splitlines()),
            f"envctl show: APIHost is still the value the daemon runs with ({running_host!r})")
    described = h.container.run(["envctl", "show", "--json", "--app-name", "example-daemon"])
    try:
        last = json.loads(described.stdout).get("lastReload") or {}
    except ValueError:
        last = {}
    s.equal((last.get("outcome"), (last.get("error") or {}).get("file")), ("rejected", MAIN_FILE),
            "envctl show --json: lastReload rejected, naming the file")
    if h.c.version >= 255:
        socket = "/run/example-daemon/configuration.varlink"
        introspect = h.container.run(["varlinkctl", "introspect", socket, "io.swiftenvironments.Configuration"])
        s.check(introspect.returncode == 0 and "method Reload" in introspect.stdout,
                f"varlinkctl introspect shows the interface (exit {introspect.returncode}, {introspect.stderr.strip()!r})")
        info = h.container.run(["varlinkctl", "info", socket])
        s.check(info.returncode == 0 and "io.swiftenvironments.Configuration" in info.stdout,
                f"varlinkctl info lists the interface (exit {info.returncode}, {info.stderr.strip()!r})")
        called = h.container.run(["varlinkctl", "call", socket, "io.swiftenvironments.Configuration.Reload", "{}"])
        s.check(called.returncode != 0 and "ReloadRejected" in called.stdout + called.stderr,
                f"varlinkctl call Reload of the malformed file fails with ReloadRejected (exit {called.returncode}: {(called.stdout + called.stderr).strip()[:300]!r})")
    s.check(not [e for e in h.daemon_entries(mark) if first(e, "MESSAGE_ID") == APPLIED_ID or (first(e, "MESSAGE") or "").startswith("APIBaseUrl=")],
            "nothing was applied from the malformed file")
    # Fixed, and reloaded.
    h.cursor_before = h.cursor()
    h.edit(APIHost="api3.example.com")
    h.expect_api_host("api3.example.com")
    h.reload_expecting(s, "fixed file", ["APIBaseUrl", "APIHost"])
    s.equal(h.status_text(), h.expected_status(), "StatusText no longer mentions the rejection")
    if h.c.version >= 255:
        called = h.container.run(["varlinkctl", "call", "/run/example-daemon/configuration.varlink",
                                  "io.swiftenvironments.Configuration.Reload", "{}"])
        try:
            verdict = json.loads(called.stdout).get("verdict") or {}
        except ValueError:
            verdict = {}
        s.equal((called.returncode, verdict.get("outcome"), verdict.get("generation")), (0, "unchanged", h.generation),
                f"varlinkctl call Reload answers with the verdict ({called.stderr.strip()!r})")
    s.check(h.wait_message(h.cursor_before, h.start_line()) is not None, f"the fixed value in the journal: {h.start_line()!r}")
    h.check_applied_entry(s, h.wait_applied(h.cursor_before, h.generation), h.generation, ["APIBaseUrl", "APIHost"])


def scenario_5(h, s):
    for writer, host in (("atomic", "api4.example.com"), ("in-place", "api5.example.com")):
        what = "rename over the file" if writer == "atomic" else "in-place write"
        mark = h.cursor()
        inode = os.stat(h.container.host_path(MAIN_FILE)).st_ino
        started = time.monotonic()
        h.edit(writer=writer, APIHost=host)
        h.expect_api_host(host)
        target = h.expected_status(h.generation + 1)
        seen = wait_for(lambda: h.status_text() == target, 1.0, interval=0.02)
        elapsed = time.monotonic() - started
        if s.check(seen, f"{what}: applied within a second (StatusText {target!r}; got {h.status_text()!r})"):
            s.note(f"{what}: applied after {elapsed * 1000:.0f} ms")
        if writer == "in-place":
            s.equal(os.stat(h.container.host_path(MAIN_FILE)).st_ino, inode, f"{what}: the file kept its inode")
        h.generation += 1
        s.check(h.wait_message(mark, h.start_line()) is not None, f"{what}: {h.start_line()!r} in the journal")
        h.check_applied_entry(s, h.wait_applied(mark, h.generation), h.generation, ["APIBaseUrl", "APIHost"], what=f"{what}: effective-settings entry")
        last = (h.state() or {}).get("lastReload") or {}
        s.check(last.get("trigger") == "file-change" and last.get("generation") == h.generation,
                f"{what}: the state file records a file-change reload to generation {h.generation}: {last}")
    time.sleep(0.2)
    s.equal(h.status_text(), h.expected_status(), "no further reload applied after the edits settled")


def is_heartbeat(entry):
    return first(entry, "MESSAGE") == "heartbeat"


def scenario_6(h, s):
    s.check(not [e for e in h.daemon_entries(h.boot_cursor) if is_heartbeat(e)], "no heartbeat entries while LogLevel is info")
    h.cursor_before = h.cursor()
    h.edit(LogLevel="debug")
    h.settings["LogLevel"] = "debug"
    h.reload_expecting(s, "LogLevel=debug", ["LogLevel"])
    mark = h.cursor_before
    notice = h.wait_message(mark, "log level is now debug")
    s.check(notice is not None and first(notice, "PRIORITY") == "5", "the daemon logged 'log level is now debug' at PRIORITY=5")
    beats = h.wait_entries(mark, is_heartbeat, timeout=3.5, count=2)
    s.check(len(beats) >= 2, f"heartbeat entries appear at debug (found {len(beats)} within 3.5 s)")
    s.equal(sorted({first(e, "PRIORITY") for e in beats}), ["7"], "heartbeat PRIORITY")
    if beats:
        s.equal(first(beats[-1], "GENERATION"), str(h.generation), "heartbeat GENERATION field")
    h.cursor_before = h.cursor()
    h.edit(LogLevel="info")
    h.settings["LogLevel"] = "info"
    h.reload_expecting(s, "LogLevel=info", ["LogLevel"])
    notice = h.wait_message(h.cursor_before, "log level is now info")
    if s.check(notice is not None, "the daemon logged 'log level is now info'"):
        time.sleep(2.5)  # more than two heartbeat intervals
        # A heartbeat that passed the level check just before the switch may still arrive
        # after the notice (later still on a loaded machine); a heartbeat written after the
        # switch would come a full interval (1 s) later, and again every second.
        switched = int(notice["__MONOTONIC_TIMESTAMP"])
        later = [int(e["__MONOTONIC_TIMESTAMP"]) - switched for e in h.daemon_entries(notice["__CURSOR"]) if is_heartbeat(e)]
        s.check(len(later) <= 1, f"at most one heartbeat in flight at the switch to info: {later}")
        s.equal([delay for delay in later if delay > 900_000], [],
                "heartbeat entries (µs after it) later than 0.9 s after 'log level is now info', in 2.5 s")
        if later:
            s.note(f"heartbeats in flight at the switch, µs after it: {later}")


def scenario_7(h, s):
    props = h.show("WatchdogUSec", "MainPID", "NRestarts")
    s.check(props.get("WatchdogUSec") in ("3s", "3000000"), f"WatchdogUSec is 3 s: {props.get('WatchdogUSec')!r}")
    main_pid = h.main_pid
    mark = h.cursor()
    with manager_debug_log(h):
        time.sleep(7)
        pings = h.notifications(mark, main_pid, "WATCHDOG=1", count=4)
    h.check_still_running(s, main_pid, "after 7 s with WatchdogSec=3s")
    timeouts = [e for e in h.manager_entries(mark) if "watchdog" in (first(e, "MESSAGE") or "").lower() and "timeout" in (first(e, "MESSAGE") or "").lower()]
    s.equal(len(timeouts), 0, "watchdog timeout messages from systemd")
    s.check(len(pings) >= 4, f"systemd received WATCHDOG=1 pings from the main process ({len(pings)} in 7 s)")
    # A restart-only key.
    h.cursor_before = h.cursor()
    h.edit(ListenPort=9090)
    h.reload_expecting(s, "ListenPort changed", [])
    pending = h.wait_entries(h.cursor_before, lambda e: first(e, "MESSAGE_ID") == PENDING_ID)
    if s.check(bool(pending), f"a pending-restart entry (MESSAGE_ID={PENDING_ID})"):
        s.equal(field(pending[0], "CONFIG_PENDING_RESTART"), ["ListenPort=9090"], "CONFIG_PENDING_RESTART")
        s.equal(first(pending[0], "PRIORITY"), "4", "pending-restart entry PRIORITY")
    h.check_applied_entry(s, h.wait_applied(h.cursor_before, h.generation), h.generation, [], what="effective settings keep ListenPort=8080")
    line = h.wait_message(h.cursor_before, h.start_line())
    s.check(line is not None and first(line, "LISTEN_PORT") == "8080", "the daemon still reads ListenPort 8080")
    s.equal((h.state() or {}).get("pendingRestart"), ["ListenPort"], "state file pendingRestart")
    # No --config-dir, --environment or CREDENTIALS_DIRECTORY: envctl takes them from the
    # daemon's state file in /run/example-daemon/.
    table = h.container.run(["envctl", "show", "--app-name", "example-daemon"])
    rows = [row for row in table.stdout.splitlines() if row.startswith("ListenPort ")]
    s.check(
        len(rows) == 1 and "= 8080 " in rows[0] and "(pending restart: 9090 after restart)" in rows[0],
        f"envctl show: ListenPort runs with 8080, pending restart to 9090: {rows} {table.stderr!r}",
    )
    shown = h.container.run(["envctl", "show", "--json", "--app-name", "example-daemon"])
    try:
        listing = json.loads(shown.stdout)
    except ValueError:
        listing = {}
    s.equal(listing.get("pendingRestart"), ["ListenPort"], "envctl show --json pendingRestart")
    s.equal((listing.get("settings") or {}).get("ListenPort", {}).get("pendingRestart"), True, "envctl show --json ListenPort.pendingRestart")
    s.equal((listing.get("settings") or {}).get("ListenPort", {}).get("runningValue"), "8080", "envctl show --json ListenPort.runningValue")
    s.note(f"envctl show: {rows[0] if rows else table.stdout!r}")


def scenario_8(h, s):
    main_pid = h.main_pid
    dropin = DROPIN_DIR + "/60-e2e.plist"
    h.cursor_before = h.cursor()
    h.container.write_atomic(dropin, plistlib.dumps({"Common": {"RequestTimeout": "15s"}}, fmt=plistlib.FMT_XML))
    h.settings["RequestTimeout"] = "15s"
    h.reload_expecting(s, "plist drop-in added", ["RequestTimeout"])
    entry = h.wait_applied(h.cursor_before, h.generation)
    h.check_applied_entry(s, entry, h.generation, ["RequestTimeout"], files=[MAIN_FILE, SHIPPED_DROPIN, dropin])
    if entry:
        source = key_values(field(entry, "CONFIG_SETTING_SOURCE")).get("RequestTimeout", "")
        s.check(dropin in source, f"RequestTimeout comes from the new drop-in: {source!r}")
    h.check_still_running(s, main_pid, "after the drop-in")
    # An environment selected by a unit drop-in.
    target = f"/etc/systemd/system/{h.unit}.d/50-environment.conf"
    os.makedirs(os.path.dirname(h.container.host_path(target)), exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "systemd", "example-daemon.service.d", "50-environment.conf"), h.container.host_path(target))
    s.equal(h.systemctl("daemon-reload").returncode, 0, "systemctl daemon-reload")
    mark = h.cursor()
    result = h.systemctl("restart", h.unit)
    s.require(result.returncode == 0, f"systemctl restart exit status 0 ({result.stderr.strip()})")
    props = h.show("ActiveState", "SubState", "StatusText", "MainPID", "Environment", "DropInPaths", "NRestarts")
    h.environment, h.generation = "Staging", 1
    h.settings = dict(EXPECTED_RELEASE, APIHost="staging.api.example.com", APIBaseUrl="https://staging.api.example.com/v1",
                      HeartbeatInterval="2s", RequestTimeout="15s", ListenPort=str(h.plist["Common"]["ListenPort"]))
    s.check(target in props.get("DropInPaths", ""), f"DropInPaths lists the unit drop-in: {props.get('DropInPaths')!r}")
    s.check("APP_ENVIRONMENT=Staging" in props.get("Environment", "").split(), f"Environment= has APP_ENVIRONMENT=Staging: {props.get('Environment')!r}")
    s.equal((props.get("ActiveState"), props.get("SubState")), ("active", "running"), "ActiveState/SubState after restart")
    s.equal(props.get("StatusText"), h.expected_status(), "StatusText after restart")
    s.check(props.get("MainPID") != main_pid, "a new main process")
    s.equal(props.get("NRestarts"), "0", "NRestarts (a manual restart does not count)")
    h.main_pid = props.get("MainPID")
    line = h.wait_message(mark, h.start_line())
    s.check(line is not None, f"start line {h.start_line()!r}")
    if line:
        s.equal(first(line, "LISTEN_PORT"), h.settings["ListenPort"], "ListenPort from the file (pending since scenario 7) took effect on restart")
    applied = h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") == APPLIED_ID)
    h.check_applied_entry(s, applied[0] if applied else None, 1, [], files=[MAIN_FILE, SHIPPED_DROPIN, dropin])
    state = h.state() or {}
    s.equal((state.get("environment"), state.get("generation"), state.get("pendingRestart")), ("Staging", 1, []), "state file after restart")


def scenario_9(h, s):
    main_pid = h.main_pid
    mark = h.cursor()
    with manager_debug_log(h):
        started = time.monotonic()
        result = h.systemctl("stop", h.unit)
        elapsed = time.monotonic() - started
        stopping = h.notifications(mark, main_pid, "STOPPING=1")
        exited = h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") == PROCESS_EXITED_ID, source=h.manager_entries)
    s.equal(result.returncode, 0, f"systemctl stop exit status ({result.stderr.strip()})")
    s.check(elapsed < 1.0, f"stopped within a second ({elapsed * 1000:.0f} ms)")
    s.note(f"systemctl stop took {elapsed * 1000:.0f} ms")
    # systemd 257 may unload the stopped unit at once (its ExecMain* properties then read 0),
    # so the exit status comes from systemd's own entries.
    props = h.show("ActiveState", "SubState", "Result")
    s.equal((props.get("ActiveState"), props.get("SubState")), ("inactive", "dead"), "ActiveState/SubState after stop")
    s.equal(props.get("Result"), "success", "Result")
    if s.check(bool(exited), "systemd logged the main process's exit"):
        s.equal((first(exited[0], "EXIT_CODE"), first(exited[0], "EXIT_STATUS")), ("exited", "0"), "main process EXIT_CODE/EXIT_STATUS")
    outcome = h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") in (UNIT_SUCCESS_ID, UNIT_FAILED_ID), source=h.manager_entries)
    s.check(bool(outcome) and first(outcome[0], "MESSAGE_ID") == UNIT_SUCCESS_ID,
            f"systemd says 'Deactivated successfully': {[first(e, 'MESSAGE') for e in outcome]}")
    if s.check(bool(stopping), f"systemd got STOPPING=1 from PID {main_pid}") and exited:
        order = [e["__CURSOR"] for e in h.journal(mark)]
        s.check(order.index(stopping[0]["__CURSOR"]) < order.index(exited[0]["__CURSOR"]),
                "STOPPING=1 arrived before the main process exited")
    s.check(h.wait_message(mark, "stopped") is not None, "the daemon logged 'stopped'")


def scenario_10(h, s):
    """A daemon with no configuration files runs on its built-in configuration; `systemctl
    reload` (ExecReload=envctl reload) asks it over its control socket and succeeds."""
    unit = "builtin-e2e.service"
    started = h.container.run([
        "systemd-run", "--unit", unit, "-p", "Type=notify", "-p", "RuntimeDirectory=builtin-e2e",
        "-p", "ExecReload=/usr/local/bin/envctl reload --pid $MAINPID",
        "/usr/local/bin/example-daemon", "--config-dir", "/nonexistent/builtin-e2e"])
    if not s.check(started.returncode == 0, f"systemd-run of a daemon without files ({started.stderr.strip()!r})"):
        return
    try:
        reload = h.systemctl("reload", unit)
        s.equal(reload.returncode, 0, f"systemctl reload of the built-in configuration daemon ({reload.stderr.strip()!r})")
        said = h.container.run(["journalctl", "-u", unit, "-o", "cat", "SYSLOG_IDENTIFIER=envctl", "--no-pager"]).stdout
        s.check("reloaded: configuration unchanged, generation 1" in said, f"envctl reload's verdict in the journal: {said.strip()!r}")
        shown = h.container.run(["envctl", "show", "--app-name", "builtin-e2e"])
        s.check(shown.returncode == 0 and "# files: (built-in configuration)" in shown.stdout,
                f"envctl show --app-name asks the daemon: {shown.stdout.splitlines()[:2]} {shown.stderr.strip()!r}")
        checked = h.container.run(["envctl", "check", "--app-name", "builtin-e2e"])
        s.check(checked.returncode == 0 and checked.stdout.startswith("OK:"), f"envctl check through the daemon: {checked.stdout.strip()!r} {checked.stderr.strip()!r}")
    finally:
        h.systemctl("stop", unit)
    s.check(h.container.run(["test", "-e", "/run/builtin-e2e/configuration.varlink"]).returncode != 0,
            "the control socket is gone after the stop")


SCENARIO_FUNCTIONS = {
    "1": scenario_1, "2": scenario_2, "3": scenario_3, "4": scenario_4, "5": scenario_5,
    "6": scenario_6, "7": scenario_7, "8": scenario_8, "9": scenario_9, "10": scenario_10,
}


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def run_configuration(configuration, binaries, selected):
    results = {}
    log(f"\n=== {configuration.name}: systemd {configuration.version} (Debian {configuration.suite}), "
        f"{configuration.unit} ({configuration.mode})")
    started = time.monotonic()
    container = None
    journal = ""
    try:
        lower = ensure_rootfs(configuration.suite)
        name = f"e2e-{configuration.name}-{os.getpid()}"
        container = Container(name, lower)
        container.prepare()
        secret = "e2e-secret-" + secrets.token_hex(16)
        container.install(binaries, secret)
        boot_started = time.monotonic()
        container.boot()
        log(f"  booted in {time.monotonic() - boot_started:.1f} s")
        version = container.run(["systemctl", "--version"]).stdout.split()
        if len(version) < 2 or version[1] != str(configuration.version):
            raise RuntimeError(f"expected systemd {configuration.version} in the container, got {' '.join(version[:3])}")
        container.run(["journalctl", "--update-catalog"])
        harness = Harness(configuration, container, secret)
        for number, title in SCENARIOS:
            if number not in selected:
                continue
            scenario = Scenario(number)
            scenario_started = time.monotonic()
            try:
                SCENARIO_FUNCTIONS[number](harness, scenario)
            except ScenarioAbort as abort:
                if str(abort) not in scenario.failures:
                    scenario.failures.append(f"aborted: {abort}")
            except Exception as error:  # noqa: BLE001 - a harness error is a failed scenario
                scenario.failures.append(f"harness error: {error!r}\n{traceback.format_exc()}")
            results[number] = scenario
            verdict = "PASS" if not scenario.failures else "FAIL"
            log(f"  {number}. {title:<48} {verdict}  ({time.monotonic() - scenario_started:.1f} s)")
            for failure in scenario.failures:
                log(f"       - {failure}")
            if VERBOSE or scenario.failures:
                for note in scenario.notes:
                    log(f"       note: {note}")
        if any(result.failures for result in results.values()):
            journal = container.run(["journalctl", "-u", configuration.unit, "--no-pager", "-o", "short-precise", "-n", "150"]).stdout
    except Exception as error:  # noqa: BLE001
        setup = Scenario("setup")
        setup.failures.append(f"{error}")
        results["setup"] = setup
        log(f"  setup FAILED: {error}")
        if VERBOSE:
            traceback.print_exc()
        if container is not None and container.pid:
            with contextlib.suppress(Exception):
                journal = container.run(["journalctl", "-u", configuration.unit, "--no-pager", "-o", "short-precise", "-n", "150"]).stdout
    finally:
        if container is not None:
            container.shutdown()
    if journal:
        log(f"\n--- journalctl -u {configuration.unit} -o short-precise (last 150 lines), {configuration.name} ---")
        log(journal.rstrip())
        log("--- end of journal ---")
    return results, time.monotonic() - started


def print_tables(all_results, selected):
    log("\n" + "=" * 100)
    log("End-to-end results")
    for configuration, (results, elapsed) in all_results.items():
        log(f"\n{configuration} ({elapsed:.0f} s)")
        log(f"  {'scenario':<58} result")
        if "setup" in results:
            log(f"  {'setup':<58} FAIL: {results['setup'].failures[0][:60]}")
        for number, title in SCENARIOS:
            if number not in selected:
                continue
            result = results.get(number)
            verdict = "-- not run" if result is None else ("PASS" if not result.failures else f"FAIL ({len(result.failures)})")
            log(f"  {number + '. ' + title:<58} {verdict}")


def main():
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binaries", help="a directory with release builds of example-daemon and envctl (default: build them)")
    parser.add_argument("--config", action="append", choices=[c.name for c in CONFIGURATIONS],
                        help="run only this configuration (repeatable)")
    parser.add_argument("--scenario", action="append", choices=[n for n, _ in SCENARIOS],
                        help="run only this scenario (repeatable; 1 always runs; they build on each other, so a later one alone may differ)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every check and command")
    arguments = parser.parse_args()
    VERBOSE = arguments.verbose
    started = time.monotonic()

    def interrupted(signum, _frame):
        raise Interrupted(f"signal {signum}")

    signal.signal(signal.SIGINT, signal.default_int_handler)  # even if started with SIGINT ignored
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)

    check_prerequisites(need_swift=arguments.binaries is None)
    if arguments.binaries:
        binaries = os.path.abspath(arguments.binaries)
    else:
        log("Building the static release binaries ...")
        build_started = time.monotonic()
        try:
            binaries = build_binaries()
        except (RuntimeError, subprocess.CalledProcessError) as error:
            log(f"FAIL: {error}")
            return 1
        log(f"  built in {time.monotonic() - build_started:.0f} s: {binaries}")
    for product in ("example-daemon", "envctl"):
        if not os.access(os.path.join(binaries, product), os.X_OK):
            log(f"FAIL: no executable {product} in {binaries}")
            return 1
    log(f"Root file systems: {cache_directory()} (override with ${CACHE_VARIABLE})")

    selected = set(arguments.scenario or [n for n, _ in SCENARIOS]) | {"1"}  # the others need a started daemon
    configurations = [c for c in CONFIGURATIONS if not arguments.config or c.name in arguments.config]
    all_results = {}
    try:
        for configuration in configurations:
            all_results[configuration.name] = run_configuration(configuration, binaries, selected)
    except (KeyboardInterrupt, Interrupted) as interruption:
        log(f"\nInterrupted ({str(interruption) or 'Ctrl-C'}); containers were shut down.")
        print_tables(all_results, selected)
        return 130
    print_tables(all_results, selected)
    failed = [name for name, (results, _) in all_results.items() if any(r.failures for r in results.values())]
    log(f"\nTotal time: {time.monotonic() - started:.0f} s")
    if failed:
        # Last, so that the tail of a long CI log names what failed and why.
        log("\nFailed checks:")
        for name, (results, _) in all_results.items():
            for number, result in results.items():
                for failure in result.failures:
                    log(f"  {name} scenario {number}: {failure.splitlines()[0][:400]}")
        log(f"FAILED: {', '.join(failed)}")
        return 1
    log("All end-to-end scenarios passed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
