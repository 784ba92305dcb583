"""Scenario 16: mounts over the configuration. A remount changes the files under
/etc/example-daemon without a single inotify event; the daemon (in the private mount namespace
its hardening gives it, which receives mounts from the host) must notice it in the mount
table and reload.

- Every systemd: a bind mount of another copy of the directory over /etc/example-daemon, and
  its unmount, each reload the daemon (trigger `file`).
- systemd 254 and later (here 257): a directory configuration extension in
  /var/lib/confexts/e2e, `systemd-confext merge`, `refresh` after the extension changed, a
  `refresh` that changes nothing (`unchanged`), and `unmerge` back to the base value;
  `envctl show` (and `--json`) names the extension as the source of its drop-in's values.
  systemd 252 has no systemd-confext (it came in 254)."""

import json
import os
import plistlib
import shutil
import time

from .common import CONFIG_DIR, DROPIN_DIR, wait_for
from .journal import first

EXTENSION = "e2e"
EXTENSION_ROOT = f"/var/lib/confexts/{EXTENSION}"
EXTENSION_DROPIN = f"{DROPIN_DIR}/70-confext.plist"
BIND_SOURCE = "/var/lib/e2e-bind/example-daemon"
MOUNT_LINE = "a mount over the configuration's directories changed; reloading"


def wait_generation(h, s, generation, what, timeout=5.0):
    """Waits until StatusText and the state file say `generation`; returns the state's lastReload."""
    target = h.expected_status(generation)
    started = time.monotonic()
    seen = wait_for(lambda: h.status_text() == target, timeout, interval=0.02)
    elapsed = time.monotonic() - started
    if s.check(seen, f"{what}: applied within {timeout:.0f} s (StatusText {target!r}; got {h.status_text()!r})"):
        s.note(f"{what}: applied {elapsed * 1000:.0f} ms after the command returned")
    h.generation = generation
    return ((h.state() or {}).get("lastReload")) or {}


def api_host(h):
    return h.container.run(["envctl", "get", "APIHost", "--app-name", "example-daemon"]).stdout.strip()


def expect_reload(h, s, mark, generation, host, what, outcome="applied"):
    last = wait_generation(h, s, generation, what)
    s.check(last.get("trigger") == "file" and last.get("outcome") == outcome and last.get("generation") == generation,
            f"{what}: the state file records a {outcome} file reload at generation {generation}: {last}")
    s.equal(api_host(h), host, f"{what}: envctl get APIHost")
    line = h.wait_message(mark, MOUNT_LINE)
    s.check(line is not None, f"{what}: the daemon's journal says {MOUNT_LINE!r}")


def bind_mount(h, s):
    """A bind mount over /etc/example-daemon and its unmount, each noticed (any systemd)."""
    copy = h.container.host_path(BIND_SOURCE)
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(h.container.host_path(CONFIG_DIR), copy)
    plist = plistlib.loads(h.container.read(BIND_SOURCE + "/Environments.plist"))
    plist["Common"]["APIHost"] = "bind.api.example.com"
    with open(h.container.host_path(BIND_SOURCE + "/Environments.plist"), "wb") as handle:
        handle.write(plistlib.dumps(plist, fmt=plistlib.FMT_XML))
    original = api_host(h)
    try:
        mark = h.cursor()
        mounted = h.container.run(["mount", "--bind", BIND_SOURCE, CONFIG_DIR])
        s.require(mounted.returncode == 0, f"mount --bind over {CONFIG_DIR} ({mounted.stderr.strip()!r})")
        expect_reload(h, s, mark, h.generation + 1, "bind.api.example.com", "bind mount over the directory")
        mark = h.cursor()
        unmounted = h.container.run(["umount", CONFIG_DIR])
        s.require(unmounted.returncode == 0, f"umount {CONFIG_DIR} ({unmounted.stderr.strip()!r})")
        expect_reload(h, s, mark, h.generation + 1, original, "unmount")
    finally:
        h.container.run(["umount", CONFIG_DIR])
        shutil.rmtree(copy, ignore_errors=True)


def write_extension(h, host):
    """The directory extension e2e: its extension-release file and one drop-in setting APIHost."""
    root = h.container.host_path(EXTENSION_ROOT)
    release = f"{root}/etc/extension-release.d/extension-release.{EXTENSION}"
    dropin = root + EXTENSION_DROPIN
    for path in (release, dropin):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(release, "w") as handle:
        handle.write("ID=_any\n")
    with open(dropin, "wb") as handle:
        handle.write(plistlib.dumps({"Common": {"APIHost": host}}, fmt=plistlib.FMT_XML))


def confext(h, s):
    """systemd-confext merge, refresh (changed and not), unmerge (systemd 254 and later)."""
    original = api_host(h)
    try:
        write_extension(h, "confext.api.example.com")
        mark = h.cursor()
        merged = h.container.run(["systemd-confext", "merge"])
        s.require(merged.returncode == 0, f"systemd-confext merge ({merged.stderr.strip()!r})")
        listed = h.container.run(["systemd-confext", "status", "--json=short"]).stdout
        s.check(f'"{EXTENSION}"' in listed, f"systemd-confext status lists the extension: {listed.strip()!r}")
        expect_reload(h, s, mark, h.generation + 1, "confext.api.example.com", "systemd-confext merge")

        shown = h.container.run(["envctl", "show", "--app-name", "example-daemon"])
        rows = {line.split(" = ")[0].strip(): line for line in shown.stdout.splitlines() if " = " in line}
        s.check(f"{EXTENSION_DROPIN}" in rows.get("APIHost", "") and f"(from confext {EXTENSION})" in rows.get("APIHost", ""),
                f"envctl show names the extension for APIHost: {rows.get('APIHost')!r} {shown.stderr.strip()!r}")
        s.check("confext" not in rows.get("ListenPort", "x confext"),
                f"envctl show names no extension for a value from the base /etc: {rows.get('ListenPort')!r}")
        described = h.container.run(["envctl", "show", "--json", "--app-name", "example-daemon"])
        try:
            settings = json.loads(described.stdout)["settings"]
        except (ValueError, KeyError):
            settings = {}
        s.equal((settings.get("APIHost") or {}).get("confext"), {"name": EXTENSION, "certain": True},
                "envctl show --json: APIHost's confext")
        s.equal((settings.get("ListenPort") or {}).get("confext"), None, "envctl show --json: ListenPort has no confext")

        write_extension(h, "confext2.api.example.com")
        mark = h.cursor()
        refreshed = h.container.run(["systemd-confext", "refresh"])
        s.require(refreshed.returncode == 0, f"systemd-confext refresh ({refreshed.stderr.strip()!r})")
        expect_reload(h, s, mark, h.generation + 1, "confext2.api.example.com", "systemd-confext refresh")

        # A refresh that changes nothing: one reload, reported unchanged, the same generation.
        mark = h.cursor()
        refreshed = h.container.run(["systemd-confext", "refresh"])
        s.require(refreshed.returncode == 0, f"systemd-confext refresh, unchanged ({refreshed.stderr.strip()!r})")
        s.check(h.wait_message(mark, MOUNT_LINE) is not None, f"refresh without a change: the journal says {MOUNT_LINE!r}")
        unchanged = wait_for(lambda: ((h.state() or {}).get("lastReload") or {}).get("outcome") == "unchanged", 5.0, interval=0.02)
        last = (h.state() or {}).get("lastReload") or {}
        s.check(unchanged and last.get("generation") == h.generation and last.get("trigger") == "file",
                f"refresh without a change: an unchanged file reload at generation {h.generation}: {last}")

        mark = h.cursor()
        unmerged = h.container.run(["systemd-confext", "unmerge"])
        s.require(unmerged.returncode == 0, f"systemd-confext unmerge ({unmerged.stderr.strip()!r})")
        expect_reload(h, s, mark, h.generation + 1, original, "systemd-confext unmerge")
        shown = h.container.run(["envctl", "show", "--app-name", "example-daemon"]).stdout
        s.check("confext" not in shown, "envctl show names no extension after the unmerge")
    finally:
        h.container.run(["systemd-confext", "unmerge"])
        shutil.rmtree(h.container.host_path(EXTENSION_ROOT), ignore_errors=True)


def scenario_16(h, s):
    h.fresh_start(s)
    bind_mount(h, s)
    has_confext = h.container.run(["sh", "-c", "command -v systemd-confext"]).returncode == 0
    if h.c.version < 254:
        s.check(not has_confext, f"systemd {h.c.version} has no systemd-confext (it came in 254)")
        s.note("systemd-confext: not in this systemd; only the bind mount was checked")
        return
    s.require(has_confext, f"systemd {h.c.version} has systemd-confext")
    confext(h, s)
