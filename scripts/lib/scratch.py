"""Where SwiftPM builds, for Python scripts: scratch.sh's answer, so that a script and the shell
scripts beside it always agree (CI's build cache included)."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scratch_path(flavor):
    """The scratch path of one build (debug, etcd, walk...: scratch.sh lists the flavors)."""
    out = subprocess.run(["bash", "-c", f"source scripts/lib/scratch.sh && scratch_path {flavor}"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip()
