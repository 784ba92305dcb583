"""Scenario 15: encrypted credentials. `envctl credential set` encrypts a secret with the
container's own systemd-creds for the unit under test and writes `LoadCredentialEncrypted=`;
after a restart the daemon runs with the decrypted secret, which no output, journal entry,
history entry or state file holds; `envctl credential list` says which unit setting gives
each credential; a credential the unit does not give is a rejected reload whose error names
the unit setting to add and the file and line of the reference."""

import contextlib
import json
import os
import plistlib
import secrets

from .common import DROPIN_DIR, REJECTED_ID, STATE_FILE
from .journal import field, first

CREDSTORE = "/etc/credstore.encrypted"
UNKNOWN_DROPIN = DROPIN_DIR + "/60-e2e-credential.plist"


def scenario_15(h, s):
    h.fresh_start(s)
    unit = h.unit if h.unit.endswith(".service") else h.unit + ".service"
    prefix = unit[: -len(".service")]
    encrypted = f"{CREDSTORE}/{prefix}.db-password"
    dropin = f"/etc/systemd/system/{unit}.d/90-credential-db-password.conf"
    new_secret = "e2e-encrypted-" + secrets.token_hex(16)
    secret_file = "/root/e2e-new-secret"
    location = ["--app-name", "example-daemon", "--unit", unit]
    outputs = []

    def envctl(*arguments, stdin_file=None, env=None):
        command = ["envctl", *arguments]
        if stdin_file:
            command = ["sh", "-c", 'exec "$@" < ' + stdin_file, "sh", *command]
        result = h.container.run(command, env=env)
        outputs.append(result.stdout + result.stderr)
        return result

    try:
        # Before: the shipped unit gives db-password with LoadCredential=, the daemon has it.
        listed = envctl("credential", "list", *location)
        s.equal(listed.returncode, 0, f"credential list exit status before ({listed.stdout + listed.stderr!r})")
        s.check(f"given by LoadCredential=db-password:/etc/credstore/example-daemon.db-password (/etc/systemd/system/{unit})"
                in listed.stdout,
                f"credential list names the unit's LoadCredential=: {listed.stdout!r}")
        s.check("used at /etc/example-daemon/Environments.plist:" in listed.stdout,
                f"credential list names the file and line of ${{credential:db-password}}: {listed.stdout!r}")
        s.check("the running daemon has it" in listed.stdout, f"credential list: the running daemon has it: {listed.stdout!r}")

        # A unit systemd does not know: refused before anything is read or written.
        misspelt = envctl("credential", "set", "db-password", "--app-name", "example-daemon", "--unit", "no-such-unit",
                          stdin_file="/dev/null")
        s.equal(misspelt.returncode, 1, "credential set for a unit systemd does not know: exit status")
        s.check("systemd knows no unit no-such-unit.service" in misspelt.stderr, f"it says so: {misspelt.stderr!r}")
        s.check(not os.path.exists(h.container.host_path("/etc/systemd/system/no-such-unit.service.d")),
                "no drop-in directory for that unit")

        # The secret from standard input (a file in the container, never an argument).
        with open(h.container.host_path(secret_file), "w") as handle:
            handle.write(new_secret + "\n")
        os.chmod(h.container.host_path(secret_file), 0o600)
        made = envctl("credential", "set", "db-password", *location, "--with-key", "host", stdin_file=secret_file)
        s.require(made.returncode == 0, f"credential set exit status 0 ({made.stdout + made.stderr!r})")
        s.check(f"systemctl restart {unit}" in made.stderr, f"credential set says to restart the unit: {made.stderr!r}")
        stored = os.stat(h.container.host_path(encrypted))
        s.equal(oct(stored.st_mode & 0o7777), "0o600", f"{encrypted}'s mode")
        s.equal(oct(os.stat(h.container.host_path(CREDSTORE)).st_mode & 0o7777), "0o700", f"{CREDSTORE}'s mode")
        s.equal(oct(os.stat(h.container.host_path(dropin)).st_mode & 0o7777), "0o644", f"{dropin}'s mode")
        unit_text = h.container.read(dropin).decode()
        s.check(f"LoadCredentialEncrypted=db-password:{encrypted}" in unit_text, f"the drop-in: {unit_text!r}")
        s.check(new_secret.encode() not in h.container.read(encrypted), "the encrypted file does not hold the secret")
        # The drop-in's LoadCredentialEncrypted= replaces the unit file's LoadCredential= of the
        # same name: credential list says so, and the daemon reads the new secret after a restart.
        listed = envctl("credential", "list", *location)
        s.check(f"given by LoadCredentialEncrypted=db-password:{encrypted} ({dropin})" in listed.stdout
                and "given by LoadCredential=" not in listed.stdout,
                f"credential list after set: LoadCredentialEncrypted= from the drop-in only: {listed.stdout!r}")
        s.check("the running daemon has it" in listed.stdout, f"credential list: the running daemon has it: {listed.stdout!r}")

        # Credentials are given at start: after a restart the daemon runs with the new secret.
        restarted = h.systemctl("restart", h.unit)
        s.require(restarted.returncode == 0, f"systemctl restart ({restarted.stderr.strip()})")
        credentials = {"CREDENTIALS_DIRECTORY": f"/run/credentials/{unit}"}
        reveal = envctl("get", "--app-name", "example-daemon", "--show-secrets", "Database.Password", env=credentials)
        s.equal(reveal.stdout.strip(), new_secret, "the daemon reads the decrypted secret (envctl get --show-secrets)")
        outputs.pop()  # the positive control, the one output that shows it
        listed = envctl("credential", "list", *location, "--json")
        s.equal(listed.returncode, 0, f"credential list --json exit status after ({listed.stderr.strip()})")
        with contextlib.suppress(ValueError):
            report = json.loads(listed.stdout)
            entry = next(e for e in report["credentials"] if e["name"] == "db-password")
            s.equal([g["setting"] for g in entry["givenBy"]], ["LoadCredentialEncrypted"], "credential list --json givenBy")
            s.equal(entry["runningDaemonHasIt"], True, "credential list --json runningDaemonHasIt")
            s.check(entry["references"] and entry["references"][0]["line"], f"a reference with a line: {entry['references']!r}")

        # A credential the unit does not give: the reload is rejected, and the error names the
        # unit setting to add and the reference's file and line, and no value.
        mark = h.cursor()
        h.container.write_atomic(UNKNOWN_DROPIN, plistlib.dumps({"Common": {"APIHost": "${credential:api-token}"}}))
        h.systemctl("reload", h.unit)
        rejected = h.wait_entries(mark, lambda e: first(e, "MESSAGE_ID") == REJECTED_ID, timeout=5.0)
        if s.check(bool(rejected), "a rejected-reload entry for the credential the unit does not give"):
            text = " ".join(value for name in rejected[-1] for value in field(rejected[-1], name))
            s.check("LoadCredentialEncrypted=api-token:" in text and "envctl credential set api-token" in text,
                    f"the error names LoadCredentialEncrypted=api-token: and envctl credential set: {text[:600]!r}")
            s.check(f"{UNKNOWN_DROPIN}:8" in text, f"the error names {UNKNOWN_DROPIN}:8: {text[:600]!r}")
        listed = envctl("credential", "list", *location)
        s.equal(listed.returncode, 1, "credential list exit status with a credential the unit does not give")
        s.check("api-token" in listed.stdout and "not given by" in listed.stdout, f"credential list: {listed.stdout!r}")

        # The secret is nowhere: journal, envctl's outputs, history, state file, unit files.
        dump = h.container.run(["journalctl", "-o", "json", "--all", "--no-pager"], timeout=120)
        s.check(dump.returncode == 0 and new_secret not in dump.stdout, "the secret is not in `journalctl -o json --all`")
        decoded = []
        for line in dump.stdout.splitlines():
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                decoded += [value for name in entry for value in field(entry, name)]
        s.check(not any(new_secret in value for value in decoded), "the secret is not in any decoded journal field")
        for arguments in (["history"], ["history", "--json"], ["show"], ["show", "--json"]):
            envctl(*arguments, "--app-name", "example-daemon", env=credentials)
        s.check(all(new_secret not in output for output in outputs),
                f"the secret is in none of envctl's {len(outputs)} outputs (credential set/list, history, show)")
        with contextlib.suppress(OSError):
            s.check(new_secret.encode() not in h.container.read(STATE_FILE), "the secret is not in the state file")
        status = h.systemctl("status", h.unit, "--no-pager", "-l", "-n", "50")
        s.check(new_secret not in status.stdout, "the secret is not in systemctl status")
        cat = h.systemctl("cat", h.unit)
        s.check(new_secret not in cat.stdout, "the secret is not in systemctl cat")
    finally:
        for path in (secret_file, encrypted, UNKNOWN_DROPIN):
            with contextlib.suppress(OSError):
                os.unlink(h.container.host_path(path))
        # stop_and_restore (the next scenario's start) removes the unit drop-in and reloads.
        h.stop_and_restore(s)
