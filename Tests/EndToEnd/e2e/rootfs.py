"""Cached Debian root file systems (bookworm: systemd 252; trixie: systemd 257), built once
with debootstrap from the host's own Debian mirror (or debootstrap's default).

The cache lives outside the clone ($SWIFT_ENVIRONMENTS_E2E_CACHE, default
/var/cache/swift-environments-e2e), so a second run on the same machine reuses it while a fresh
machine builds it. Each root file system is keyed by what it is built from (the suite, the
debootstrap variant and packages, the mirror): `trixie-<key>`. Changing any of them builds a
new one; nothing else invalidates it (delete the folder to refresh a suite's packages)."""

import fcntl
import glob
import hashlib
import os
import shutil
import subprocess
import time

from .common import log, skip_or_fail

CACHE_VARIABLE = "SWIFT_ENVIRONMENTS_E2E_CACHE"
DEFAULT_CACHE = "/var/cache/swift-environments-e2e"
MIRROR_VARIABLE = "SWIFT_ENVIRONMENTS_E2E_MIRROR"


def host_debian_mirror():
    """The main Debian archive the host's apt uses (deb822 `.sources` or `.list`), if any."""
    candidates = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        try:
            with open(path) as handle:
                text = handle.read()
        except OSError:
            continue
        for stanza in text.split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
            if fields.get("enabled", "yes").lower() == "no" or "deb" not in fields.get("types", "").split():
                continue
            candidates += [(uri, fields.get("suites", "")) for uri in fields.get("uris", "").split()]
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            with open(path) as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        for line in lines:
            words = [word for word in line.split("#", 1)[0].split() if not word.startswith("[")]
            if len(words) >= 3 and words[0] == "deb":
                candidates.append((words[1], words[2]))
    for uri, suites in candidates:
        # The main archive: not security updates, not another vendor's repository.
        if "security" in uri or "security" in suites or not uri.rstrip("/").endswith("/debian"):
            continue
        return uri
    return None


def debian_mirror():
    """$SWIFT_ENVIRONMENTS_E2E_MIRROR, else the host's Debian mirror, else `None`
    (debootstrap's own default)."""
    return os.environ.get(MIRROR_VARIABLE) or host_debian_mirror()


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


VARIANT = "minbase"
PACKAGES = "systemd,systemd-sysv,dbus"


def rootfs_key(suite):
    """What a root file system is built from, hashed: its folder's suffix."""
    inputs = "\n".join(["format 1", suite, VARIANT, PACKAGES, debian_mirror() or "default mirror"])
    return hashlib.sha256(inputs.encode()).hexdigest()[:12]


def mounts_under(path):
    """Mount points at or below path, deepest first."""
    prefix = os.path.realpath(path).rstrip("/") + "/"
    points = []
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            point = line.split()[1].encode().decode("unicode_escape")
            if (point + "/").startswith(prefix):
                points.append(point)
    return sorted(points, key=len, reverse=True)


def remove_tree(path):
    """Removes a root file system folder, first unmounting what an interrupted debootstrap left
    mounted in it (its /proc, /sys or /dev): removing through such a mount would try to delete
    the host's own files."""
    for point in mounts_under(path):
        subprocess.run(["umount", "--lazy", point], check=False)
    if mounts_under(path):
        raise RuntimeError(f"{path} still has mounts ({', '.join(mounts_under(path))}); unmount them and remove it by hand")
    shutil.rmtree(path, ignore_errors=True)


def ensure_rootfs(suite):
    cache = cache_directory()
    os.makedirs(cache, exist_ok=True)
    target = os.path.join(cache, f"{suite}-{rootfs_key(suite)}")
    if rootfs_complete(target):
        return target
    with open(target + ".lock", "w") as lock:
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
            remove_tree(target)
        remove_tree(temporary)
        mirror = debian_mirror()
        log(f"  building the {suite} root file system with debootstrap from {mirror or 'its default mirror'} ...")
        started = time.monotonic()
        with open(target + ".log", "w") as output:
            result = subprocess.run(
                ["debootstrap", f"--variant={VARIANT}", f"--include={PACKAGES}", suite, temporary]
                + ([mirror] if mirror else []),
                stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if result.returncode != 0 or not rootfs_complete(temporary):
            raise RuntimeError(f"debootstrap {suite} failed (exit {result.returncode}); see {target}.log")
        os.rename(temporary, target)
        log(f"  built {target} in {time.monotonic() - started:.0f} s")
        return target
