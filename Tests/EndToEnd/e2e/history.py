"""Scenario 13: `envctl history` and `envctl diff --generation` from the journal under systemd,
across a restart, and from the daemon's own history."""

import time

from .common import MAIN_FILE, REJECTED_ID, wait_for
from .journal import first

MALFORMED = b"""<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0">
<dict>
\t<key>Common</key>
\t<dict>
\t\t<key>APIHost</key>
\t\t<string>broken.example.com
\t</dict>
</plist>
"""


def edit_and_wait(h, s, host, what):
    """Edits APIHost and waits for the file watcher to apply it (the next generation)."""
    h.edit(APIHost=host)
    h.expect_api_host(host)
    target = h.expected_status(h.generation + 1)
    s.require(wait_for(lambda: h.status_text() == target, 5.0, interval=0.02),
              f"{what}: applied (StatusText {target!r}; got {h.status_text()!r})")
    h.generation += 1


def scenario_13(h, s):
    h.fresh_start(s)
    unit = h.unit if h.unit.endswith(".service") else h.unit + ".service"
    first_pid = h.main_pid
    original = h.settings["APIHost"]
    mark = h.cursor()
    edit_and_wait(h, s, "history1.example.com", "first edit")
    # A reload that changes nothing, asked over the control socket by root.
    reload = h.container.run(["envctl", "reload", "--app-name", "example-daemon"])
    s.equal(reload.returncode, 0, f"envctl reload exit status ({reload.stderr.strip()})")
    if h.c.exec_reload:
        # systemctl reload runs the unit's ExecReload=envctl reload, as the unit's own user.
        s.require(h.systemctl("reload", h.unit).returncode == 0, "systemctl reload")
    # A broken file: the watcher's reload is rejected; the fixed file changes nothing.
    h.container.write_atomic(MAIN_FILE, MALFORMED)
    s.check(bool(h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") == REJECTED_ID, timeout=5.0)),
            "the broken file's rejected reload in the journal")
    h.edit(APIHost="history1.example.com")
    time.sleep(0.5)
    # A restart: a new process, generation 1 again; then one more edit.
    s.require(h.systemctl("restart", h.unit).returncode == 0, "systemctl restart")
    h.generation = 1
    h.main_pid = h.show("MainPID").get("MainPID")
    edit_and_wait(h, s, "history2.example.com", "edit after the restart")

    listed = h.container.run(["envctl", "history", "--app-name", "example-daemon"])
    s.equal(listed.returncode, 0, f"envctl history exit status ({listed.stderr.strip()})")
    lines = listed.stdout.splitlines()
    s.note("envctl history:\n" + listed.stdout)
    s.check(lines[:1] == [f"# from the journal, unit {unit}, oldest first"], f"envctl history reads the journal: {lines[:1]}")
    s.check(any(f"generation 1  loaded at start, pid {first_pid}, environment {h.environment}" in line for line in lines),
            "the first process's start")
    s.check(any(f"generation 1  loaded at start, pid {h.main_pid}, environment {h.environment}" in line for line in lines),
            "the restarted process's start")
    s.check(f"    APIHost: {original} -> history1.example.com" in lines, "the first edit's change, before and after")
    s.check(any("unchanged  control from uid 0" in line for line in lines), "the control call that changed nothing, with its uid")
    if h.c.exec_reload:
        s.check(any("unchanged  systemctl reload (ExecReload=, uid " in line for line in lines),
                "systemctl reload, told as the unit's ExecReload= rather than a uid alone")
    rejected = [i for i, line in enumerate(lines) if "  rejected  " in line]
    s.check(bool(rejected) and MAIN_FILE in "".join(lines[rejected[0] + 1:rejected[0] + 2]),
            "the rejected reload, with the file it names on the next line")
    s.check("    APIHost: history1.example.com -> history2.example.com" in lines, "the edit after the restart")
    s.check(h.secret not in listed.stdout, "no secret in envctl history")

    own = h.container.run(["envctl", "history", "--app-name", "example-daemon", "--from", "daemon"])
    s.equal(own.returncode, 0, f"envctl history --from daemon exit status ({own.stderr.strip()})")
    s.check(own.stdout.startswith(f"# from the running daemon, pid {h.main_pid}"), f"from the daemon: {own.stdout[:120]!r}")
    s.check(f"pid {first_pid}," not in own.stdout, "the daemon's own history is its process's")
    s.check("    APIHost: history1.example.com -> history2.example.com" in own.stdout.splitlines(),
            "the daemon's history has the edit")

    diff = h.container.run(["envctl", "diff", "--generation", "1", "--app-name", "example-daemon"])
    s.equal(diff.returncode, 1, f"envctl diff --generation 1 exit status: differences ({diff.stderr.strip()})")
    s.check(diff.stdout.startswith("--- generation 1 (from the journal, applied "), f"generation 1 from the journal: {diff.stdout[:120]!r}")
    s.check("- APIHost = history1.example.com" in diff.stdout and "+ APIHost = history2.example.com" in diff.stdout,
            f"the diff names APIHost's two values: {diff.stdout!r}")
    s.check(h.secret not in diff.stdout, "no secret in envctl diff --generation")
