"""End-to-end: the latchkey command line refuses what it cannot use, with a sentence."""

import os
import subprocess

from e2e import BIN, expect


def bad_numbers(home):
    """Numbers that once trapped in the transport end in a sentence and exit status 64."""
    for value in ("inf", "nan", "1e999", "0", "-3", "1e300"):
        result = subprocess.run(
            [os.path.join(BIN, "latchkey"), f"--network-timeout={value}"], capture_output=True, text=True, timeout=60)
        expect(result.returncode == 64, f"--network-timeout {value}: exit {result.returncode}, stderr {result.stderr!r}")
        expect("--network-timeout must be a number of seconds from 1 to 3600" in result.stderr,
               f"--network-timeout {value} says why: {result.stderr!r}")


SCENARIOS = {"bad_numbers": bad_numbers}
