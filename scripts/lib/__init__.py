"""What this repository's Python scripts share (`from lib.scratch import scratch_path`): a script
run as `scripts/NAME.py` finds this package beside it. The `.sh` files here are the shell
scripts' counterparts, sourced, not run."""
