"""The checks of a scenario against one systemd unit in a container: what the Debian package's
and the Hummingbird example's end-to-end runs share."""

from .common import debug, log


class Checks:
    """Counts the checks that pass and keeps the messages of those that fail (each prefixed
    with `label`, when given), and asks systemd about `unit`."""

    def __init__(self, container, unit, label=None):
        self.c = container
        self.unit = unit
        self.label = label
        self.failures = []
        self.passed = 0

    def check(self, condition, message):
        if condition:
            self.passed += 1
            debug(f"ok: {message}")
        else:
            self.failures.append(f"{self.label}: {message}" if self.label else message)
            log(f"    FAIL: {message}")
        return condition

    def systemctl(self, *arguments):
        return self.c.run(["systemctl", *arguments], timeout=60)

    def show(self, *properties):
        """The unit's properties, as `systemctl show --property=...` gives them."""
        out = self.systemctl("show", self.unit, *[f"--property={p}" for p in properties]).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
