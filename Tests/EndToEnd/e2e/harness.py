"""The harness the scenarios use: checks that collect failures, systemctl and journal
helpers, the configuration files, and a fresh start of the daemon for every scenario."""

import contextlib
import json
import os
import plistlib
import re
import shutil
import time

from .common import (
    APPLIED_ID, CONFIG_DIR, EXPECTED_RELEASE, MAIN_FILE, ROOT, SHIPPED_DROPIN, STATE_FILE, ScenarioAbort, debug,
    wait_for,
)
from .journal import field, first, key_values


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

    # -- a fresh start ----------------------------------------------------------------------

    def stop_and_restore(self, s):
        """Stop the unit and put back what a scenario may have changed: the shipped
        configuration directory, no unit drop-ins, no failed state."""
        self.systemctl("stop", self.unit)
        self.systemctl("reset-failed", self.unit)
        etc = self.container.host_path(CONFIG_DIR)
        shutil.rmtree(etc, ignore_errors=True)
        shutil.copytree(os.path.join(ROOT, "etc", "example-daemon"), etc)
        unit_dropins = self.container.host_path(f"/etc/systemd/system/{self.unit}.d")
        if os.path.isdir(unit_dropins):
            shutil.rmtree(unit_dropins)
            s.require(self.systemctl("daemon-reload").returncode == 0, "systemctl daemon-reload after removing unit drop-ins")
        self.generation = 0
        self.environment = "Release"
        self.settings = dict(EXPECTED_RELEASE)
        self.plist = plistlib.loads(self.container.read(MAIN_FILE))
        self.main_pid = None
        self.boot_cursor = self.cursor_before = self.cursor()

    def fresh_start(self, s):
        """The daemon freshly started on the shipped configuration, generation 1."""
        self.stop_and_restore(s)
        result = self.systemctl("start", self.unit)
        s.require(result.returncode == 0, f"systemctl start exit status 0 (got {result.returncode}: {result.stderr.strip()})")
        self.generation = 1
        self.main_pid = self.show("MainPID").get("MainPID")
        s.require(self.main_pid not in (None, "", "0"), f"a MainPID after the start ({self.main_pid})")

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
        (file)"); it ends as "unchanged" (or rejected again) within milliseconds.
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
        verb = "loaded" if generation == 1 and not changed else "applied"
        # The plain journal shows a small configuration's settings in the message, in key order.
        listing = ", ".join(f"{key}={self.settings[key]}" for key in sorted(self.settings))
        s.equal(first(entry, "MESSAGE"),
                f"Configuration {verb}: environment {self.environment}, generation {generation}, {len(self.settings)} settings: {listing}",
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
                # envctl names at most 20 changed keys, then counts the rest.
                keys = sorted(changed)
                applied += "; changed: " + ", ".join(keys[:20])
                if len(keys) > 20:
                    applied += f" and {len(keys) - 20} more (envctl history lists them)"
            unchanged = f"reloaded: configuration unchanged, generation {generation}"
            expected = {applied, unchanged} if changed or generation != before else {unchanged}
            entries = self.wait_entries(mark, lambda e: first(e, "SYSLOG_IDENTIFIER") == "envctl")
            said = [first(e, "MESSAGE") for e in entries]
            s.check(len(said) == 1 and said[0] in expected,
                    f"{what}: ExecReload's output in the unit's journal is one of {sorted(expected)}: {said}")
        return result



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
