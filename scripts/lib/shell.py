"""Shell commands run to their end, for Python scripts."""
import os
import signal
import subprocess


def run_in_session(command, cwd, env, timeout):
    """Runs `command` with bash in a session of its own, its standard error into its standard
    output, and returns (exit status, output). After `timeout` seconds it stops the whole
    session (everything the command started too), and the output ends with a line that says so.
    """
    process = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        stdout, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, _ = process.communicate()
        stdout += f"\n(stopped after {timeout} s)"
    return process.returncode, stdout
