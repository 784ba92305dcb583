"""What every part of the end-to-end suite shares: output, failures, waiting, and the
identifiers and paths of the example daemon as the shipped unit files install it."""

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

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


class Options:
    """Set by the runner: print every check and command."""
    verbose = False


def log(message):
    print(message, flush=True)


def debug(message):
    if Options.verbose:
        print("    " + message, flush=True)


class Interrupted(BaseException):
    """SIGTERM/SIGHUP: unwind like Ctrl-C so that every container is shut down."""


class ScenarioAbort(Exception):
    pass

def skip_or_fail(reason):
    print("", flush=True)
    print("=" * 100)
    print(f"SKIPPED: end-to-end tests under systemd: {reason}")
    print("=" * 100, flush=True)
    if os.environ.get("CI"):
        print("CI is set: a skipped end-to-end run is a failure.", flush=True)
        sys.exit(1)
    sys.exit(0)


def wait_for(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
