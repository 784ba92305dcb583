#!/usr/bin/env python3
"""End-to-end tests of example-daemon and envctl under a real systemd.

Boots Debian bookworm (systemd 252) and trixie (systemd 257) root file systems with
systemd-nspawn, installs the static release build, the unit files from systemd/ and the
configuration from etc/, and runs the scenarios (see README.md next to this file; each starts
from a fresh daemon on the shipped configuration and can run alone) against:

  252-notify         bookworm, example-daemon.service               (Type=notify, ExecReload=envctl reload)
  257-notify-reload  trixie,   example-daemon-notify-reload.service (Type=notify-reload)
  257-notify         trixie,   example-daemon.service               (Type=notify, ExecReload=envctl reload)

Python 3 standard library only. Run as root:  python3 Tests/EndToEnd/run_e2e.py
"""

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

from e2e.common import ROOT, Interrupted, Options, ScenarioAbort, log, skip_or_fail
from e2e.container import Container
from e2e.harness import Harness, Scenario
from e2e.rootfs import CACHE_VARIABLE, cache_directory, ensure_rootfs
from e2e.scenarios import SCENARIO_FUNCTIONS, SCENARIOS


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


FLEET_PRODUCTS = ("envctl-fleet", "example-fleet-daemon")


def build_binaries(fleet=False):
    """Release builds of example-daemon and envctl (in .build-release): the directory they are
    in. With `fleet`, with the trait Fleet, and envctl-fleet and example-fleet-daemon beside
    them, as scripts/build-release.sh has all four in one directory."""
    products = ("example-daemon", "envctl") + (FLEET_PRODUCTS if fleet else ())
    traits = ["--traits", "Fleet"] if fleet else []
    common = ["swift", "build", "-c", "release", "--static-swift-stdlib", *traits,
              "--scratch-path", os.path.join(ROOT, ".build-release")]
    for product in products:
        log(f"  swift build -c release --static-swift-stdlib {' '.join(traits)} --product {product} --scratch-path .build-release")
        result = subprocess.run(common + ["--product", product], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if result.returncode != 0:
            print(result.stdout[-6000:])
            raise RuntimeError(f"building {product} failed (exit {result.returncode})")
    result = subprocess.run(common + ["--show-bin-path"], cwd=ROOT, stdout=subprocess.PIPE, text=True, check=True)
    return result.stdout.strip()



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
            if Options.verbose or scenario.failures:
                for note in scenario.notes:
                    log(f"       note: {note}")
        if any(result.failures for result in results.values()):
            journal = container.run(["journalctl", "-u", configuration.unit, "--no-pager", "-o", "short-precise", "-n", "150"]).stdout
    except Exception as error:  # noqa: BLE001
        setup = Scenario("setup")
        setup.failures.append(f"{error}")
        results["setup"] = setup
        log(f"  setup FAILED: {error}")
        if Options.verbose:
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


def prepare_root_file_systems():
    """Builds the missing root file systems, the suites side by side (debootstrap waits on the
    network and the disk more than on the processor)."""
    check_prerequisites(need_swift=False)
    suites = sorted({configuration.suite for configuration in CONFIGURATIONS})
    failures = []

    def prepare(suite):
        try:
            log(f"Root file system {suite}: {ensure_rootfs(suite)}")
        except Exception as error:  # noqa: BLE001 - reported below, and again by the run that needs it
            failures.append(f"{suite}: {error}")

    threads = [threading.Thread(target=prepare, args=(suite,)) for suite in suites]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for failure in failures:
        log(f"FAIL: {failure}")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binaries", help="a directory with release builds of example-daemon and envctl, and of envctl-fleet "
                        "and example-fleet-daemon for the fleet scenario (default: build them)")
    parser.add_argument("--config", action="append", choices=[c.name for c in CONFIGURATIONS],
                        help="run only this configuration (repeatable)")
    parser.add_argument("--scenario", action="append", choices=[n for n, _ in SCENARIOS],
                        help="run only this scenario (repeatable); each starts from a fresh daemon")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every check and command")
    parser.add_argument("--prepare", action="store_true",
                        help="only build the missing root file systems (both suites at once) and exit")
    arguments = parser.parse_args()
    Options.verbose = arguments.verbose
    started = time.monotonic()
    if arguments.prepare:
        return prepare_root_file_systems()

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
            binaries = build_binaries(fleet=True)
        except (RuntimeError, subprocess.CalledProcessError) as error:
            log(f"FAIL: {error}")
            return 1
        log(f"  built in {time.monotonic() - build_started:.0f} s: {binaries}")
    for product in ("example-daemon", "envctl"):
        if not os.access(os.path.join(binaries, product), os.X_OK):
            log(f"FAIL: no executable {product} in {binaries}")
            return 1
    missing = [product for product in FLEET_PRODUCTS if not os.access(os.path.join(binaries, product), os.X_OK)]
    if missing:
        log(f"  no {' or '.join(missing)} in {binaries}: the fleet scenario will fail (scripts/build-release.sh builds them)")
    log(f"Root file systems: {cache_directory()} (override with ${CACHE_VARIABLE})")

    selected = set(arguments.scenario or [n for n, _ in SCENARIOS])
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
