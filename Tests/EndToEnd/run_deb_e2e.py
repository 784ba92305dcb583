#!/usr/bin/env python3
"""End-to-end test of the Debian packages (scripts/package-deb.sh) with the real dpkg, apt and
systemd of fresh Debian containers: trixie (systemd 257) and bookworm (systemd 252).

  install    `apt-get install ./example-daemon_VERSION_ARCH.deb ./environments-fleet_VERSION_ARCH.deb`
             (offline: the container has no network, and the packages need nothing that it
             lacks); example-daemon's maintainer scripts enabled and started
             example-daemon.service, which runs /usr/bin/example-daemon on the conffiles in
             /etc/example-daemon with the credential postinst made; systemd's trigger put the
             catalog entries in the journal's catalog; man pages and completions are in place
  fleet      envctl runs /usr/bin/envctl-fleet (environments-fleet) for `envctl publish` and
             `envctl fleet status`; example-fleet-daemon is the packages' version
  reload     an edit of a conffile + systemctl reload: the daemon serves the new value (envctl show)
  reinstall  `apt-get install --reinstall`: the edited conffile is kept, the service restarted
  purge      `apt-get purge environments-fleet`: envctl still works, and `envctl publish` says
             that it needs environments-fleet; then `apt-get purge example-daemon`: the service
             stopped, units, conffiles, credential, enablement symlinks and catalog entries gone

--deb names the example-daemon package; the environments-fleet package is the one beside it with
the same version and architecture (scripts/package-deb.sh makes both). Without it the run fails,
unless --no-fleet says to test example-daemon alone.

Reuses the e2e package's containers and root file systems. Python 3 standard library only.

  sudo python3 Tests/EndToEnd/run_deb_e2e.py [--deb FILE | --binaries DIR] [--no-fleet] [--suite trixie|bookworm]... [-v]
"""

import argparse
import os
import plistlib
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_e2e as e2e  # noqa: E402
from e2e.checks import Checks  # noqa: E402
from e2e.common import APPLIED_ID, CONFIG_DIR, CREDENTIAL_FILE, MAIN_FILE, SHIPPED_DROPIN, Options, wait_for  # noqa: E402

UNIT = "example-daemon.service"
FLEET_PACKAGE = "environments-fleet"
SCHEMA_FILE = "/usr/share/example-daemon/schema.json"
VERSIONS = {"trixie": 257, "bookworm": 252}
APT = {"DEBIAN_FRONTEND": "noninteractive"}


class Run(Checks):
    def __init__(self, container, suite):
        super().__init__(container, UNIT, label=suite)

    def exists(self, path):
        return self.c.run(["test", "-e", path]).returncode == 0

    def apt_get(self, *arguments):
        """apt-get in /var/tmp, where the package is (`apt-get install ./FILE.deb`)."""
        started = time.monotonic()
        result = self.c.run(["sh", "-c", 'cd /var/tmp && exec apt-get -y -q "$@"', "apt-get", *arguments], timeout=300, env=APT)
        e2e.log(f"  apt-get {' '.join(arguments)}: exit {result.returncode} ({time.monotonic() - started:.1f} s)")
        if result.returncode != 0 or Options.verbose:
            e2e.log("    " + (result.stdout + result.stderr).strip().replace("\n", "\n    "))
        return result

    def catalog_lists_applied(self):
        return APPLIED_ID in self.c.run(["journalctl", "--list-catalog", APPLIED_ID]).stdout

    def served(self, key):
        """The value the running daemon serves, from `envctl show` (which asks its control
        socket: '# environment E, generation N', then 'KEY = VALUE (SOURCE)' lines)."""
        shown = self.c.run(["envctl", "show", "--app-name", "example-daemon"])
        header = next((line for line in shown.stdout.splitlines() if line.startswith("# environment ")), None)
        row = next((line for line in shown.stdout.splitlines() if line.startswith(key + " ")), "")
        value = row.split(" = ", 1)[1].split(" ", 1)[0] if " = " in row else None
        return header, value

    def status(self):
        """StatusText once no reload is in flight (the file watcher may be applying the same edit)."""
        settled = wait_for(lambda: (lambda t: None if t.startswith("Reloading") else t)(self.show("StatusText").get("StatusText", "")), 3.0)
        return settled or self.show("StatusText").get("StatusText", "")


def fleet_deb_beside(deb):
    """environments-fleet_VERSION_ARCH.deb beside example-daemon_VERSION_ARCH.deb, or None."""
    directory, name = os.path.split(deb)
    if not name.startswith("example-daemon_"):
        return None
    path = os.path.join(directory, FLEET_PACKAGE + name[len("example-daemon"):])
    return path if os.path.isfile(path) else None


def fleet_installed(run, version):
    """envctl's fleet commands run /usr/bin/envctl-fleet; example-fleet-daemon is this version."""
    c = run.c
    status = c.run(["dpkg-query", "-W", "-f", "${Status} ${Version}", FLEET_PACKAGE]).stdout
    run.check(status == f"install ok installed {version}", f"dpkg-query {FLEET_PACKAGE}: {status!r}")
    for path in ("/usr/bin/envctl-fleet", "/usr/bin/example-fleet-daemon", "/usr/share/man/man1/envctl-fleet.1.gz",
                 "/usr/share/man/man1/example-fleet-daemon.1.gz", f"/usr/share/doc/{FLEET_PACKAGE}/copyright",
                 f"/usr/share/doc/{FLEET_PACKAGE}/examples/example-daemon-fleet.service"):
        run.check(run.exists(path), f"{path} is installed")
    unit = c.run(["cat", f"/usr/share/doc/{FLEET_PACKAGE}/examples/example-daemon-fleet.service"]).stdout
    run.check("ExecStart=/usr/bin/example-fleet-daemon" in unit and "/usr/local" not in unit,
              "the example unit runs /usr/bin/example-fleet-daemon")
    for command in (["envctl", "fleet", "status", "--help"], ["envctl", "publish", "--help"]):
        result = c.run(command)
        output = result.stdout + result.stderr
        run.check(result.returncode == 0 and "--etcd-endpoints" in output,
                  f"{' '.join(command)} (envctl-fleet's): exit {result.returncode}, {output.strip()[:300]!r}")
    shown = c.run(["example-fleet-daemon", "--version"])
    run.check(shown.returncode == 0 and shown.stdout.strip() == version,
              f"example-fleet-daemon --version: {shown.stdout.strip()!r}, the package's {version!r}")


def fleet_purged(run):
    """`apt-get purge environments-fleet`: envctl and the daemon keep working; the fleet's
    commands say which package they need."""
    c = run.c
    result = run.apt_get("purge", FLEET_PACKAGE)
    run.check(result.returncode == 0, f"apt-get purge {FLEET_PACKAGE} exit status")
    run.check(c.run(["dpkg-query", "-W", "-f", "${Status}", FLEET_PACKAGE]).stdout.strip() in ("", "unknown ok not-installed"),
              f"dpkg no longer knows {FLEET_PACKAGE}")
    status = c.run(["dpkg-query", "-W", "-f", "${Status}", "example-daemon"]).stdout
    run.check(status == "install ok installed", f"example-daemon stays installed: {status!r}")
    for path in ("/usr/bin/envctl-fleet", "/usr/bin/example-fleet-daemon", f"/usr/share/doc/{FLEET_PACKAGE}"):
        run.check(not run.exists(path), f"{path} is gone")
    props = run.show("ActiveState", "SubState")
    run.check((props.get("ActiveState"), props.get("SubState")) == ("active", "running"), f"example-daemon.service still runs: {props}")
    served = run.served("APIHost")
    run.check(served[1] == "packaged.example.com", f"envctl show (the daemon) still works: {served}")
    for command in (["envctl", "publish", "--etcd-endpoints", "http://127.0.0.1:2379", f"{CONFIG_DIR}/Environments.plist"],
                    ["envctl", "fleet", "status", "--etcd-endpoints", "http://127.0.0.1:2379"]):
        result = c.run(command)
        run.check(result.returncode != 0 and FLEET_PACKAGE in result.stderr and "envctl-fleet" in result.stderr,
                  f"{' '.join(command[:3])} without envctl-fleet names {FLEET_PACKAGE}: exit {result.returncode}, {result.stderr.strip()!r}")


def scenario(run, deb, fleet_deb):
    c = run.c
    names = []
    for path in (deb, fleet_deb) if fleet_deb else (deb,):
        name = os.path.basename(path)
        package = f"/var/tmp/{name}"  # readable by apt's _apt user, unlike /root
        shutil.copyfile(path, c.host_path(package))
        os.chmod(c.host_path(package), 0o644)
        names.append(name)
    name = names[0]

    # install
    result = run.apt_get("install", *(f"./{n}" for n in names))
    if not run.check(result.returncode == 0, f"apt-get install {' '.join('./' + n for n in names)} exit status"):
        return
    status = c.run(["dpkg-query", "-W", "-f", "${Status} ${Version}", "example-daemon"]).stdout
    run.check(status.startswith("install ok installed "), f"dpkg-query: {status!r}")
    version = status.rsplit(" ", 1)[-1]
    run.check(run.systemctl("is-enabled", UNIT).stdout.strip() == "enabled", "the unit is enabled (deb-systemd-helper enable)")
    props = run.show("ActiveState", "SubState", "StatusText", "MainPID", "FragmentPath", "ExecStart")
    e2e.log(f"  after the installation: {props.get('ActiveState')}/{props.get('SubState')}, {props.get('StatusText')!r}, "
            f"{props.get('FragmentPath')}")
    run.check((props.get("ActiveState"), props.get("SubState")) == ("active", "running"),
              f"the unit started on installation (deb-systemd-invoke start): {props.get('ActiveState')}/{props.get('SubState')}")
    run.check(props.get("StatusText") == "Environment Release, configuration generation 1", f"StatusText: {props.get('StatusText')!r}")
    run.check("path=/usr/bin/example-daemon " in props.get("ExecStart", ""), f"ExecStart runs /usr/bin/example-daemon: {props.get('ExecStart')!r}")
    run.check((props.get("FragmentPath") or "").endswith("/lib/systemd/system/example-daemon.service"),
              f"the unit is the package's, in /usr/lib or /lib: {props.get('FragmentPath')!r}")
    conffiles = c.run(["dpkg-query", "-W", "-f", "${Conffiles}", "example-daemon"]).stdout
    listed = sorted(line.split()[0] for line in conffiles.splitlines() if line.strip())
    run.check(listed == sorted([MAIN_FILE, SHIPPED_DROPIN]), f"conffiles: {listed}")
    run.check(c.run(["stat", "-c", "%a %U", CREDENTIAL_FILE]).stdout.strip() == "600 root",
              f"postinst made {CREDENTIAL_FILE}, 0600 root")
    run.check(run.catalog_lists_applied(), f"journalctl --list-catalog has {APPLIED_ID} (systemd's trigger ran --update-catalog)")
    for path in ("/usr/bin/envctl", "/usr/share/man/man1/envctl.1.gz", "/usr/share/man/man1/example-daemon.1.gz",
                 "/usr/share/bash-completion/completions/envctl", "/usr/share/zsh/vendor-completions/_envctl",
                 "/usr/share/fish/vendor_completions.d/envctl.fish", "/usr/share/doc/example-daemon/copyright",
                 "/usr/lib/systemd/catalog/environments.catalog", SCHEMA_FILE):
        run.check(run.exists(path), f"{path} is installed")
    # The declared settings, without the daemon: the installed schema file checks the shipped
    # configuration strictly (what a build server does before it ships a change).
    checked = c.run(["envctl", "check", "--strict", "--schema", SCHEMA_FILE, "--config-dir", "/etc/example-daemon"])
    run.check(checked.returncode == 0 and "checking against the 10 settings declared in" in checked.stdout,
              f"envctl check --strict --schema {SCHEMA_FILE}: exit {checked.returncode}, {(checked.stdout + checked.stderr).strip()!r}")
    explained = c.run(["envctl", "explain", "--app-name", "example-daemon", "ListenPort"]).stdout
    run.check("restart" in explained and "1...65535" in explained, f"envctl explain ListenPort (the daemon): {explained!r}")
    credentials = {"CREDENTIALS_DIRECTORY": f"/run/credentials/{UNIT}"}
    secret = c.run(["cat", CREDENTIAL_FILE]).stdout
    revealed = c.run(["envctl", "get", "--app-name", "example-daemon", "--show-secrets", "Database.Password"], env=credentials)
    run.check(bool(secret) and revealed.stdout.strip() == secret, "the daemon's Database.Password is the credential postinst made")
    served = run.served("APIHost")
    run.check(served == ("# environment Release, generation 1", "api.example.com"), f"envctl show (the daemon): {served}")
    if fleet_deb:
        fleet_installed(run, version)

    # reload: an edit of a conffile, as an editor saves it, then systemctl reload.
    plist = plistlib.loads(c.read(MAIN_FILE))
    plist["Common"]["APIHost"] = "packaged.example.com"
    c.write_atomic(MAIN_FILE, plistlib.dumps(plist, fmt=plistlib.FMT_XML))
    result = run.systemctl("reload", UNIT)
    run.check(result.returncode == 0, f"systemctl reload exit status ({result.stderr.strip()!r})")
    run.check(run.status() == "Environment Release, configuration generation 2", f"StatusText after the reload: {run.status()!r}")
    served = run.served("APIHost")
    run.check(served == ("# environment Release, generation 2", "packaged.example.com"), f"after the reload, envctl show (the daemon): {served}")
    main_pid = run.show("MainPID").get("MainPID")

    # reinstall: the edited conffile stays, the service is restarted (deb-systemd-invoke restart).
    result = run.apt_get("install", "--reinstall", f"./{name}")
    run.check(result.returncode == 0, "apt-get install --reinstall exit status")
    props = run.show("ActiveState", "MainPID", "StatusText")
    run.check(props.get("ActiveState") == "active" and props.get("MainPID") not in ("0", main_pid),
              f"restarted by the reinstallation: MainPID {main_pid} -> {props.get('MainPID')}, {props.get('ActiveState')}")
    served = run.served("APIHost")
    run.check(served == ("# environment Release, generation 1", "packaged.example.com"), f"the edited conffile is kept: envctl show {served}")
    main_pid = props.get("MainPID")

    # purge environments-fleet alone: example-daemon and envctl stay.
    if fleet_deb:
        fleet_purged(run)

    # purge: what must go is there before (the units are in /usr/lib or /lib, as the building
    # machine's debhelper put them; on merged /usr each is seen at both).
    units = [f"{directory}/{unit}" for directory in ("/usr/lib/systemd/system", "/lib/systemd/system")
             for unit in ("example-daemon.service", "example-daemon@.service")]
    owned = ["/etc/systemd/system/multi-user.target.wants/example-daemon.service",
             "/var/lib/systemd/deb-systemd-helper-enabled/example-daemon.service.dsh-also",
             CONFIG_DIR, CREDENTIAL_FILE, "/run/example-daemon", "/usr/bin/example-daemon", "/usr/bin/envctl",
             "/usr/lib/systemd/catalog/environments.catalog"]
    missing = [path for path in owned if not run.exists(path)]
    run.check(not missing and any(run.exists(path) for path in units[:2]), f"before the purge, all is there: missing {missing}")
    result = run.apt_get("purge", "example-daemon")
    run.check(result.returncode == 0, "apt-get purge exit status")
    run.check(c.run(["dpkg-query", "-W", "-f", "${Status}", "example-daemon"]).stdout.strip() in ("", "unknown ok not-installed"),
              "dpkg no longer knows the package")
    run.check(not run.exists(f"/proc/{main_pid}"), f"the daemon (PID {main_pid}) stopped (deb-systemd-invoke stop)")
    props = run.show("LoadState", "ActiveState")
    run.check(props == {"LoadState": "not-found", "ActiveState": "inactive"}, f"systemd no longer has the unit: {props}")
    for path in units + owned:
        run.check(not run.exists(path), f"{path} is gone")
    run.check(not run.catalog_lists_applied(), f"journalctl --list-catalog no longer has {APPLIED_ID}")


def run_suite(suite, deb, fleet_deb):
    started = time.monotonic()
    e2e.log(f"\n=== {suite} (systemd {VERSIONS[suite]}): {', '.join(os.path.basename(d) for d in (deb, fleet_deb) if d)}")
    container = e2e.Container(f"e2e-deb-{suite}-{os.getpid()}", e2e.ensure_rootfs(suite))
    run = Run(container, suite)
    try:
        container.prepare()
        container.boot()
        version = container.run(["systemctl", "--version"]).stdout.split()
        if run.check(version[1:2] == [str(VERSIONS[suite])], f"systemd {VERSIONS[suite]} in the container: {version[:2]}"):
            scenario(run, deb, fleet_deb)
    except Exception:  # noqa: BLE001 - a harness error is a failed run
        traceback.print_exc()
        run.failures.append(f"{suite}: the scenario aborted")
    finally:
        if run.failures and container.pid:
            e2e.log(container.run(["journalctl", "--no-pager", "-n", "60"]).stdout)
        container.shutdown()
    e2e.log(f"  {suite}: {run.passed} checks passed, {len(run.failures)} failed ({time.monotonic() - started:.0f} s)")
    return run


def package(binaries):
    """The example-daemon .deb scripts/package-deb.sh made (its first line; the second, when
    there is one, is environments-fleet's, beside it)."""
    command = [os.path.join(e2e.ROOT, "scripts", "package-deb.sh")] + (["--bin-dir", binaries] if binaries else [])
    e2e.log("  " + " ".join(command))
    result = subprocess.run(command, cwd=e2e.ROOT, stdout=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"scripts/package-deb.sh failed (exit {result.returncode})")
    return result.stdout.strip().splitlines()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deb", help="the example-daemon package to test, environments-fleet's beside it "
                        "(default: build them with scripts/package-deb.sh)")
    parser.add_argument("--binaries", help="release builds of example-daemon, envctl, envctl-fleet and example-fleet-daemon "
                        "for scripts/package-deb.sh --bin-dir")
    parser.add_argument("--no-fleet", action="store_true", help="test example-daemon alone, without environments-fleet")
    parser.add_argument("--suite", action="append", choices=sorted(VERSIONS), help="only this Debian suite (repeatable; default: trixie and bookworm)")
    parser.add_argument("-v", "--verbose", action="store_true")
    arguments = parser.parse_args()
    Options.verbose = arguments.verbose
    e2e.check_prerequisites(need_swift=arguments.deb is None and arguments.binaries is None)
    started = time.monotonic()
    try:
        deb = os.path.abspath(arguments.deb) if arguments.deb else package(arguments.binaries)
    except RuntimeError as error:
        e2e.log(f"FAIL: {error}")
        return 1
    fleet_deb = None
    if not arguments.no_fleet:
        fleet_deb = fleet_deb_beside(deb)
        if fleet_deb is None:
            e2e.log(f"FAIL: no {FLEET_PACKAGE} package beside {deb} (the same name with {FLEET_PACKAGE} for "
                    "example-daemon; scripts/package-deb.sh makes it when it has envctl-fleet and example-fleet-daemon), "
                    "or pass --no-fleet")
            return 1
    runs = [run_suite(suite, deb, fleet_deb) for suite in arguments.suite or ["trixie", "bookworm"]]
    passed, failures = sum(run.passed for run in runs), [f for run in runs for f in run.failures]
    e2e.log("=" * 100)
    e2e.log(f"Debian package under systemd: {passed} checks passed, {len(failures)} failed ({time.monotonic() - started:.0f} s)")
    for failure in failures:
        e2e.log(f"  FAILED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
