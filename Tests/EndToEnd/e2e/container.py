"""One booted systemd in a throw-away overlay of a cached root file system, driven from the
host with nsenter."""

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time

from .common import CONTAINER_PATH, CREDENTIAL_FILE, ROOT, ScenarioAbort, debug, log


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

    def place(self, source, destination, mode):
        """Copy the host's file `source` to `destination` in the root, with `mode`."""
        target = os.path.join(self.root, destination.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, mode)

    def install(self, binaries, secret):
        """Install binaries, units, catalog, configuration and credential into the root."""
        root = self.root
        place = self.place

        for product in ("example-daemon", "envctl"):
            place(os.path.join(binaries, product), f"/usr/local/bin/{product}", 0o755)
        # The fleet's programs, when they were built (scripts/build-release.sh builds both, with
        # the trait Fleet): the fleet scenario's daemon, and envctl-fleet beside
        # envctl, which runs it for `envctl publish` and `envctl fleet status`.
        for product in ("example-fleet-daemon", "envctl-fleet"):
            if os.path.exists(os.path.join(binaries, product)):
                place(os.path.join(binaries, product), f"/usr/local/bin/{product}", 0o755)
        for unit in ("example-daemon.service", "example-daemon-notify-reload.service", "example-daemon@.service"):
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
