"""The scenarios: each one starts from a freshly started daemon on the shipped configuration
(`Harness.fresh_start`), so any one of them can run alone (`run_e2e.py --scenario N`)."""

import contextlib
import collections
import json
import os
import plistlib
import re
import shutil
import time

from .common import (
    APPLIED_ID, DROPIN_DIR, EXPECTED_RELEASE, MAIN_FILE, PENDING_ID, PROCESS_EXITED_ID, REJECTED_ID, ROOT,
    SHIPPED_DROPIN, STARTED_ID, UNIT_FAILED_ID, UNIT_SUCCESS_ID, wait_for,
)
from . import confext, credentials, fleet, history
from .harness import manager_debug_log
from .journal import field, first, key_values

SCENARIOS = [
    ("1", "start: returns after READY=1, active, StatusText"),
    ("2", "journal: start line, effective settings, no secret"),
    ("3", "good edit + systemctl reload"),
    ("4", "malformed file + reload, then fixed"),
    ("5", "edit without systemctl (rename, in place)"),
    ("6", "LogLevel debug/info by reload; on 255+, SetLogLevel with varlinkctl"),
    ("7", "watchdog; restart-only key pending"),
    ("8", "plist drop-in; unit drop-in selects Staging"),
    ("9", "stop: STOPPING=1, clean exit"),
    ("10", "built-in configuration: systemctl reload through the control socket"),
    ("11", "hardening: systemd-analyze security, an unprivileged dynamic user"),
    ("12", "two template instances: their own values; reloading one leaves the other"),
    ("13", "envctl history and diff --generation from the journal, across a restart"),
    ("14", "fleet: etcd in the container, envctl publish, the fleet unit applies it"),
    ("15", "encrypted credential: envctl credential set/list, the daemon reads it, no secret shown"),
    ("16", "mounts: bind mount; on 254+, systemd-confext merge/refresh/unmerge"),
]


def scenario_1(h, s):
    h.stop_and_restore(s)
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
    h.fresh_start(s)
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
    h.fresh_start(s)
    main_pid = h.main_pid
    before = h.generation
    # A reload without a change: the signal path alone (no file watcher involved).
    h.cursor_before = h.cursor()
    h.reload_expecting(s, "reload without a change", [], generation=before)
    last = (h.state() or {}).get("lastReload") or {}
    # ExecReload=envctl reload asks the control socket (trigger "control"); notify-reload signals.
    expected_trigger = "control" if h.c.exec_reload else "signal"
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
    # A clean start: libdispatch's worker threads (Swift concurrency, NIO, the observers' queue)
    # set their own nice value from their QoS (-2 user-initiated, -4 user-interactive and the
    # manager thread behind dispatch sources) and log every refusal ("Failed to set thread
    # priority for worker thread"). The unit allows setpriority (alone of @resources): a refusal
    # by the filter (errno=1) is always a failure. The kernel refuses an unprivileged process a
    # higher priority (errno=13) unless RLIMIT_NICE allows it: the units say LimitNICE=-4 (24),
    # which systemd sets where it may; a container without CAP_SYS_RESOURCE (this CI's) keeps
    # the lower limit, and the lines stay there, counted (1 to 5 a process, with the load).
    noise = [(first(entry, "_PID"), first(entry, "MESSAGE")) for entry in h.daemon_entries()
             if "Failed to set thread priority" in (first(entry, "MESSAGE") or "")]
    refused = [message for _, message in noise if not message.endswith("errno=13")]
    s.check(not refused, f"no thread-priority refusals by the unit's system call filter: {refused[:2]}")
    per_process = collections.Counter(pid for pid, _ in noise)
    s.equal(h.show("LimitNICE").get("LimitNICE"), "24", "the unit asks for RLIMIT_NICE 24 (LimitNICE=-4)")
    nice_limit = nice_rlimit(h.container, main_pid)
    if nice_limit is not None and nice_limit >= 24:
        s.check(not noise, f"with RLIMIT_NICE {nice_limit}, a clean start: no thread-priority lines: {noise[:2]}")
    else:
        s.note(f"RLIMIT_NICE here is {nice_limit} (the service manager could not raise it to 24); "
               f"'Failed to set thread priority ... errno=13' lines per daemon process: {dict(per_process)}")


def nice_rlimit(container, pid):
    """The soft RLIMIT_NICE of a process in the container (/proc/PID/limits), or None."""
    try:
        text = container.read(f"/proc/{pid}/limits").decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("Max nice priority"):
            fields = line.split()
            try:
                return int(fields[3])
            except (IndexError, ValueError):
                return None
    return None


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
    h.fresh_start(s)
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
    h.fresh_start(s)
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
        s.check(last.get("trigger") == "file" and last.get("generation") == h.generation,
                f"{what}: the state file records a file reload to generation {h.generation}: {last}")
    time.sleep(0.2)
    s.equal(h.status_text(), h.expected_status(), "no further reload applied after the edits settled")


def is_heartbeat(entry):
    return first(entry, "MESSAGE") == "heartbeat"


def scenario_6(h, s):
    h.fresh_start(s)
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
    if h.c.version >= 255:
        set_log_level_by_varlinkctl(h, s)


def set_log_level_by_varlinkctl(h, s):
    """systemd's io.systemd.service on the control socket, called with varlinkctl as for
    systemd's own daemons: Ping, SetLogLevel over LogLevel=info and back, Reload; another user
    may Ping but not set the level."""
    socket = "/run/example-daemon/configuration.varlink"
    ping = h.container.run(["varlinkctl", "call", socket, "io.systemd.service.Ping", "{}"])
    s.equal(ping.returncode, 0, f"varlinkctl call io.systemd.service.Ping ({ping.stderr.strip()!r})")
    introspect = h.container.run(["varlinkctl", "introspect", socket, "io.systemd.service"])
    s.check(introspect.returncode == 0 and "method SetLogLevel" in introspect.stdout,
            f"varlinkctl introspect io.systemd.service (exit {introspect.returncode}, {introspect.stderr.strip()!r})")
    nobody = h.container.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              "varlinkctl", "call", socket, "io.systemd.service.SetLogLevel", '{"level":7}'])
    s.check(nobody.returncode != 0 and "PermissionDenied" in nobody.stdout + nobody.stderr,
            f"another user's SetLogLevel is refused (exit {nobody.returncode}: {(nobody.stdout + nobody.stderr).strip()[:200]!r})")
    mark = h.cursor()
    called = h.container.run(["varlinkctl", "call", socket, "io.systemd.service.SetLogLevel", '{"level":7}'])
    s.equal(called.returncode, 0, f"varlinkctl call io.systemd.service.SetLogLevel level 7 ({called.stderr.strip()!r})")
    notice = h.wait_entries(mark, lambda e: (first(e, "MESSAGE") or "").startswith(
        "log level is now debug, set by io.systemd.service.SetLogLevel from uid 0"))
    s.check(bool(notice), "the daemon logged who set the level")
    beats = h.wait_entries(mark, is_heartbeat, timeout=3.5, count=2)
    s.check(len(beats) >= 2, f"heartbeat entries at debug while LogLevel is info (found {len(beats)} within 3.5 s)")
    shown = h.container.run(["envctl", "show", "--app-name", "example-daemon"])
    s.check("# log level debug (syslog 7) set by io.systemd.service.SetLogLevel from uid 0" in shown.stdout
            and any(line.startswith("LogLevel ") and "(overridden: debug" in line for line in shown.stdout.splitlines()),
            f"envctl show says LogLevel is overridden and by what: {shown.stdout.splitlines()[:6]}")
    # A reload through io.systemd.service keeps the override.
    reload = h.container.run(["varlinkctl", "call", socket, "io.systemd.service.Reload", "{}"])
    s.equal(reload.returncode, 0, f"varlinkctl call io.systemd.service.Reload ({reload.stderr.strip()!r})")
    mark = h.cursor()
    beats = h.wait_entries(mark, is_heartbeat, timeout=2.5, count=1)
    s.check(len(beats) >= 1, "still at debug after the reload")
    removed = h.container.run(["varlinkctl", "call", socket, "io.systemd.service.SetLogLevel", '{"level":null}'])
    s.equal(removed.returncode, 0, f"SetLogLevel with a null level removes the override ({removed.stderr.strip()!r})")
    back = h.wait_entries(mark, lambda e: (first(e, "MESSAGE") or "").startswith("log level override removed by uid 0"))
    s.check(bool(back) and "the log level is info again" in (first(back[0], "MESSAGE") or ""),
            f"back at LogLevel=info: {[first(e, 'MESSAGE') for e in back]}")


def scenario_7(h, s):
    h.fresh_start(s)
    props = h.show("WatchdogUSec", "MainPID", "NRestarts")
    s.check(props.get("WatchdogUSec") in ("3s", "3000000"), f"WatchdogUSec is 3 s: {props.get('WatchdogUSec')!r}")
    main_pid = h.main_pid
    mark = h.cursor()
    with manager_debug_log(h):
        # Four pings take about 6 s at WatchdogSec=3s (one every half interval).
        pings = h.notifications(mark, main_pid, "WATCHDOG=1", source_timeout=12.0, count=4)
    h.check_still_running(s, main_pid, "after four watchdog intervals")
    timeouts = [e for e in h.manager_entries(mark) if "watchdog" in (first(e, "MESSAGE") or "").lower() and "timeout" in (first(e, "MESSAGE") or "").lower()]
    s.equal(len(timeouts), 0, "watchdog timeout messages from systemd")
    s.check(len(pings) >= 4, f"systemd received WATCHDOG=1 pings from the main process ({len(pings)} within 12 s)")
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
    h.fresh_start(s)
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
    # A large drop-in (600 settings, past the ~480 at which one entry listing every setting
    # exceeded journald's 1,024 fields): the applied entry still arrives whole, listing 100
    # settings, the changed ones first, with the count and the command for the rest.
    large = DROPIN_DIR + "/70-e2e-large.plist"
    bulk = {f"Bulk{index:03d}": f"value {index}" for index in range(600)}
    h.cursor_before = h.cursor()
    h.container.write_atomic(large, plistlib.dumps({"Common": bulk}, fmt=plistlib.FMT_XML))
    h.reload_expecting(s, "a drop-in of 600 settings added", list(bulk))
    entry = h.wait_applied(h.cursor_before, h.generation)
    if s.check(entry is not None, "the applied entry of a reload that added 600 settings is in the journal"):
        total = len(h.settings) + len(bulk)
        listed = field(entry, "CONFIG_SETTING")
        s.equal(len(listed), 100, "settings listed in the entry")
        s.equal(first(entry, "CONFIG_SETTING_COUNT"), str(total), "CONFIG_SETTING_COUNT")
        s.equal(first(entry, "CONFIG_SETTING_UNLISTED"), str(total - 100), "CONFIG_SETTING_UNLISTED")
        s.check(all(setting.startswith("Bulk") for setting in listed), f"the changed keys come first: {listed[:3]}")
        s.equal(len(field(entry, "CONFIG_CHANGED_KEY")), 100, "changed keys named in the entry")
        s.equal(first(entry, "CONFIG_CHANGED_COUNT"), "600", "CONFIG_CHANGED_COUNT")
        s.check("`envctl show --app-name example-daemon` lists them all" in (first(entry, "MESSAGE") or ""),
                f"the message says how to see the rest: {first(entry, 'MESSAGE')!r}")
    fallback = [e for e in h.daemon_entries() if (first(e, "MESSAGE") or "").startswith("  Bulk")]
    s.check(not fallback, f"no setting logged line by line (the fallback when an entry is refused): {len(fallback)}")
    h.cursor_before = h.cursor()
    os.remove(h.container.host_path(large))
    h.reload_expecting(s, "the drop-in of 600 settings removed", list(bulk))
    h.check_applied_entry(s, h.wait_applied(h.cursor_before, h.generation), h.generation, list(bulk)[:100],
                          files=[MAIN_FILE, SHIPPED_DROPIN, dropin], what="entry after removing the large drop-in")
    h.check_still_running(s, main_pid, "after the large drop-in")
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
        s.equal(first(line, "LISTEN_PORT"), h.settings["ListenPort"], "ListenPort from the file after the restart")
    applied = h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") == APPLIED_ID)
    h.check_applied_entry(s, applied[0] if applied else None, 1, [], files=[MAIN_FILE, SHIPPED_DROPIN, dropin])
    state = h.state() or {}
    s.equal((state.get("environment"), state.get("generation"), state.get("pendingRestart")), ("Staging", 1, []), "state file after restart")


def scenario_9(h, s):
    h.fresh_start(s)
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
    """A daemon with no configuration files (an empty ConfigurationDirectory=) runs on its
    built-in configuration; `systemctl reload` (ExecReload=envctl reload) asks it over its
    control socket and succeeds. A directory named with --config-dir that does not exist is a
    start failure, not the built-in configuration."""
    typo = h.container.run([
        "systemd-run", "--wait", "--unit", "typo-e2e.service", "-p", "Type=notify",
        "/usr/local/bin/example-daemon", "--config-dir", "/nonexistent/typo-e2e"])
    s.check(typo.returncode != 0, f"a daemon with a --config-dir that does not exist fails to start (exit {typo.returncode})")
    h.container.run(["systemctl", "reset-failed", "typo-e2e.service"])
    unit = "builtin-e2e.service"
    started = h.container.run([
        "systemd-run", "--unit", unit, "-p", "Type=notify", "-p", "RuntimeDirectory=builtin-e2e",
        "-p", "ConfigurationDirectory=builtin-e2e",
        "-p", "ExecReload=/usr/local/bin/envctl reload --pid $MAINPID",
        # Named explicitly: $CONFIGURATION_DIRECTORY alone would go on to /etc/example-daemon,
        # which holds the shipped configuration, as its directory holds no Environments.plist.
        "/usr/local/bin/example-daemon", "--config-dir", "/etc/builtin-e2e"])
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


def scenario_11(h, s):
    """The shipped unit is sandboxed (rated at most 2.0 on 257) and everything above still
    works under it; the daemon runs as a dynamic user, not root."""
    h.fresh_start(s)
    rated = h.container.run(["systemd-analyze", "security", "--no-pager", h.unit])
    match = re.search(r"Overall exposure level for \S+: ([0-9.]+) (\w+)", rated.stdout)
    if s.check(match is not None, f"systemd-analyze security rates {h.unit} ({rated.stderr.strip()[:200]!r})"):
        level, verdict = float(match.group(1)), match.group(2)
        s.note(f"systemd-analyze security {h.unit}: {level} {verdict} (systemd {h.c.version})")
        if h.c.version >= 257:
            s.check(level <= 2.0, f"exposure level at most 2.0 on systemd {h.c.version}: {level} {verdict}")
    if h.c.version >= 257:
        # Every unit file shipped, rated as a file (the fleet and Hummingbird units need
        # services this container does not run).
        h.container.run(["mkdir", "-p", "/run/e2e-units"])
        for name in sorted(os.listdir(os.path.join(ROOT, "systemd"))):
            if not name.endswith(".service"):
                continue
            h.container.write_atomic(f"/run/e2e-units/{name}", open(os.path.join(ROOT, "systemd", name), "rb").read())
            offline = h.container.run(
                ["systemd-analyze", "security", "--offline=true", "--no-pager", f"/run/e2e-units/{name}"])
            found = re.search(r"Overall exposure level for \S+: ([0-9.]+) (\w+)", offline.stdout)
            if s.check(found is not None, f"systemd-analyze security --offline=true rates {name} ({offline.stderr.strip()[:200]!r})"):
                s.note(f"systemd-analyze security {name}: {found.group(1)} {found.group(2)} (offline)")
                s.check(float(found.group(1)) <= 2.0, f"{name}: exposure level at most 2.0: {found.group(1)} {found.group(2)}")
    status = h.container.read(f"/proc/{h.main_pid}/status").decode("utf-8", "replace") if h.main_pid else ""
    uids = next((line.split()[1:] for line in status.splitlines() if line.startswith("Uid:")), [])
    s.check(bool(uids) and all(uid != "0" for uid in uids), f"the daemon does not run as root: Uid {uids}")
    capabilities = next((line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), None)
    s.equal(capabilities, "0000000000000000", "the daemon's effective capabilities")
    props = h.show("DynamicUser", "ProtectSystem", "RestrictAddressFamilies", "NoNewPrivileges")
    s.equal(props.get("DynamicUser"), "yes", "DynamicUser")
    s.equal(props.get("ProtectSystem"), "strict", "ProtectSystem")
    s.equal(props.get("NoNewPrivileges"), "yes", "NoNewPrivileges")
    # The reload path under the sandbox: ExecReload (as the dynamic user) through the socket.
    h.cursor_before = h.cursor()
    h.edit(APIHost="hardened.example.com")
    h.expect_api_host("hardened.example.com")
    h.reload_expecting(s, "reload under the sandbox", ["APIBaseUrl", "APIHost"])


def scenario_12(h, s):
    """Two instances of example-daemon@.service share /etc/example-daemon and differ by
    their `Instances` entries; a reload of one changes nothing in the other."""
    h.stop_and_restore(s)
    units = {name: f"example-daemon@{name}.service" for name in ("eu-west", "us-east")}

    def envctl(name, *arguments):
        return h.container.run(["envctl", *arguments, "--app-name", "example-daemon", "--instance", name])

    def status(unit):
        return h.container.run(["systemctl", "show", unit, "-p", "StatusText", "--value"]).stdout.strip()

    try:
        for name, unit in units.items():
            started = h.systemctl("start", unit)
            s.require(started.returncode == 0, f"systemctl start {unit} ({started.stderr.strip()!r})")
        def settings(name):
            shown = envctl(name, "show", "--json")
            try:
                return json.loads(shown.stdout)["settings"]
            except (ValueError, KeyError):
                return {"unreadable": shown.stdout + shown.stderr}

        for name, unit in units.items():
            value = envctl(name, "get", "APIHost")
            s.equal(value.stdout.strip(), f"{name}.api.example.com", f"APIHost of {unit} (envctl get --instance {name})")
            s.equal(status(unit), f"Environment Release, instance {name}, configuration generation 1", f"StatusText of {unit}")
            shown = envctl(name, "show")
            # The first line says where the values come from (the daemon); the next, which environment.
            header = shown.stdout.splitlines()[:3]
            s.check(any(line.startswith(f"# environment Release, instance {name}, generation 1") for line in header),
                    f"envctl show --instance {name} names the instance: {header} {shown.stderr.strip()!r}")
            s.check(f"[Instances.{name}]" in shown.stdout, f"envctl show --instance {name} names the Instances section as the source")
            entries = h.container.run(["journalctl", "-u", unit, "-o", "json", "--no-pager", f"MESSAGE_ID={APPLIED_ID}"]).stdout
            s.check(f'"CONFIG_INSTANCE":"{name}"' in entries.replace(" ", ""), f"the journal's effective-settings entry of {unit} has CONFIG_INSTANCE={name}")
        s.check(h.container.run(["test", "-S", "/run/example-daemon/eu-west/configuration.varlink"]).returncode == 0,
                "each instance has its own control socket (/run/example-daemon/eu-west/)")

        us_east_before = settings("us-east")
        # A drop-in that changes eu-west only; the us-east instance's watcher sees the file too,
        # and must keep every value and source (its file list, and so its generation, may grow).
        h.container.write_atomic(f"{DROPIN_DIR}/60-eu-west.plist", plistlib.dumps(
            {"Instances": {"eu-west": {"APIHost": "eu-west-2.api.example.com"}}}))
        reloaded = h.systemctl("reload", units["eu-west"])
        s.equal(reloaded.returncode, 0, f"systemctl reload {units['eu-west']} ({reloaded.stderr.strip()!r})")
        s.equal(envctl("eu-west", "get", "APIHost").stdout.strip(), "eu-west-2.api.example.com", "eu-west's APIHost after its reload")
        settled = wait_for(lambda: "generation 2" in status(units["eu-west"]), 5.0)
        s.check(settled, f"eu-west's StatusText says generation 2: {status(units['eu-west'])!r}")
        # Give us-east's watcher time to act on the same file: it must find nothing to change.
        time.sleep(1.0)
        s.equal(envctl("us-east", "get", "APIHost").stdout.strip(), "us-east.api.example.com", "us-east's APIHost after eu-west's reload")
        s.equal(settings("us-east"), us_east_before, "us-east's settings, values and sources, after eu-west's reload")
        s.check(status(units["us-east"]).startswith("Environment Release, instance us-east, configuration generation"),
                f"us-east's StatusText after eu-west's reload: {status(units['us-east'])!r}")
        s.note(f"us-east after eu-west's drop-in: {status(units['us-east'])!r}")
    finally:
        for unit in units.values():
            h.systemctl("stop", unit)
    s.check(h.container.run(["test", "-e", "/run/example-daemon/eu-west"]).returncode != 0,
            "the stopped instance's runtime directory is gone")


SCENARIO_FUNCTIONS = {
    "1": scenario_1, "2": scenario_2, "3": scenario_3, "4": scenario_4, "5": scenario_5,
    "6": scenario_6, "7": scenario_7, "8": scenario_8, "9": scenario_9, "10": scenario_10,
    "11": scenario_11, "12": scenario_12, "13": history.scenario_13, "14": fleet.scenario_14,
    "15": credentials.scenario_15,
    "16": confext.scenario_16,
}
