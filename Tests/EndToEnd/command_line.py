"""End-to-end: starting latchkey — what it refuses, and what it does when its
sandbox child never answers."""

import os
import shutil
import subprocess

from e2e import BIN, expect
from driver import Latchkey


def bad_numbers(home):
    """Numbers that once trapped in the transport end in a sentence and exit status 64."""
    for value in ("inf", "nan", "1e999", "0", "-3", "1e300"):
        result = subprocess.run(
            [os.path.join(BIN, "latchkey"), f"--network-timeout={value}"], capture_output=True, text=True, timeout=60)
        expect(result.returncode == 64, f"--network-timeout {value}: exit {result.returncode}, stderr {result.stderr!r}")
        expect("--network-timeout must be a number of seconds from 1 to 3600" in result.stderr,
               f"--network-timeout {value} says why: {result.stderr!r}")


def silent_sandbox(home):
    """A sandbox child that is alive but never prints: the app says so within its limit
    and stays usable, instead of "Starting…" for ever."""
    install = os.path.join(home.root, "install")
    os.makedirs(install, exist_ok=True)
    for name in ("latchkey", "libLatchkeyWebSignIn.so"):
        shutil.copy2(os.path.join(BIN, name), install)
    fake = os.path.join(install, "latchkey-sandbox")
    with open(fake, "w") as f:
        # Holds its output open and says nothing (its input never gets a byte to echo).
        f.write("#!/bin/sh\nexec cat\n")
    os.chmod(fake, 0o755)
    app = Latchkey(os.path.join(install, "latchkey"), home.root, home.shots)
    try:
        app.wait_status("did not answer within 10 seconds", timeout=40)
        expect(app.process.poll() is None, "the app still runs")
        app.screenshot("01-sandbox-silent")
        children = subprocess.run(["pgrep", "-f", fake], capture_output=True, text=True).stdout.split()
        expect(children == [], f"the silent child was stopped: {children}")
    finally:
        app.quit()


SCENARIOS = {"bad_numbers": bad_numbers, "silent_sandbox": silent_sandbox}
